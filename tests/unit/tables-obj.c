/* SPDX-License-Identifier: LGPL-2.1-or-later */
int tables_obj_value(void) { return 42; }
