// SPDX-License-Identifier: LGPL-2.1-or-later
/* html-clicks.js -- appended by t8000 to a copy of a report page, after the
 * page's own script: it clicks and types what a reader would, through the
 * page's own event handlers (real DOM events, nothing called directly),
 * and writes what the page then shows into a <pre> element with the id
 * "clicks", one fact a line, for the test to read from the DOM that headless Chromium dumps.
 *
 *   sort COLUMN ARIA-SORT V1,V2,...   the leak table after a header click
 *   zoom VALUE FULL DIMMED            the flame graph after a box click:
 *                                     the focused box's value, whether it
 *                                     spans the whole width, ancestor boxes
 *   matched VALUE                     after typing into the search box
 *   error MESSAGE                     anything that threw
 */
(function () {
	"use strict";
	var out = [];

	function click(el) {
		el.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, view: window }));
	}
	function header(table, name) {
		return Array.prototype.filter.call(table.tHead.rows[0].cells, function (th) {
			return th.textContent.trim() === name;
		})[0];
	}
	function column(table, th) {
		return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
			var td = r.cells[th.cellIndex], s = td.querySelector("summary");
			return (s || td).textContent.trim().replace(/\s+/g, " ");
		});
	}
	function sorted(table, name) {
		var th = header(table, name);
		click(th);
		out.push("sort " + name + " " + th.getAttribute("aria-sort") + " " + column(table, th).join(","));
	}
	/* The focused box is the first one not dimmed; dimmed ones are its
	 * ancestors, drawn above it. */
	function zoomState() {
		var svg = document.querySelector("#flame-graph svg");
		var boxes = svg.querySelectorAll("g.frame");
		var dimmed = svg.querySelectorAll("g.frame.dim").length;
		var focus = boxes[dimmed];
		var w = parseFloat(focus.querySelector("rect").getAttribute("width"));
		var full = Math.abs(w + 1 - parseFloat(svg.getAttribute("width"))) < 0.2 ? "full" : "part";
		out.push("zoom " + focus.getAttribute("data-value") + " " + full + " " + dimmed);
		return focus;
	}
	function box(named) {
		return Array.prototype.filter.call(document.querySelectorAll("#flame-graph g.frame"), function (g) {
			return g.querySelector("title").textContent.indexOf(named) === 0;
		})[0];
	}

	try {
		var table = document.getElementById("leak-sites");
		sorted(table, "Bytes");
		sorted(table, "Bytes");
		sorted(table, "Site");

		zoomState();
		click(box("parse_args"));
		var focus = zoomState();
		click(focus);
		zoomState();
		click(document.getElementById("flame-reset"));
		zoomState();

		var input = document.getElementById("flame-search");
		input.value = "load_config";
		input.dispatchEvent(new Event("input", { bubbles: true }));
		out.push("matched " + document.getElementById("flame-status").getAttribute("data-matched"));
	} catch (e) {
		out.push("error " + e);
	}
	var pre = document.createElement("pre");
	pre.id = "clicks";
	pre.textContent = out.join("\n") + "\n";
	document.body.appendChild(pre);
})();
