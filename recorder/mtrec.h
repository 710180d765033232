/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec.h -- scope what the mtrec recorder records.
 *
 *   trace_on();            start (or resume) recording
 *   trace_off();           stop recording until the next trace_on()
 *   trace_mark("label");   put a labelled mark in the trace
 *
 * and tells it of allocations malloc never sees, and of reference counts
 * (share/trace-format.md, "# k" lines; reported per KIND by mtanalyze):
 *
 *   mtrec_alloc("pool", p, size);   KIND's allocator handed out p
 *   mtrec_free("pool", p);          ... and took it back
 *   mtrec_ref("dict_t", obj);       a reference to obj was taken
 *   mtrec_unref("dict_t", obj);     ... and dropped
 *
 * Call mtrec_free and mtrec_unref before the object may be reused (before
 * the real release), mtrec_alloc and mtrec_ref after the real call.
 *
 * The calls are weak: a program built with them links and runs normally
 * without the recorder, and then they do nothing.  glibc's mtrace() and
 * muntrace() from <mcheck.h> do the same as trace_on() and trace_off()
 * when the recorder is loaded.  With MTREC_SCOPED=1 nothing is recorded
 * until the first trace_on() or mtrace(). */
#ifndef MTREC_H
#define MTREC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

extern void trace_on(void) __attribute__((weak));
extern void trace_off(void) __attribute__((weak));
extern void trace_mark(const char *label) __attribute__((weak));
extern void mtrec_alloc(const char *kind, const void *ptr, size_t size) __attribute__((weak));
extern void mtrec_free(const char *kind, const void *ptr) __attribute__((weak));
extern void mtrec_ref(const char *kind, const void *ptr) __attribute__((weak));
extern void mtrec_unref(const char *kind, const void *ptr) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* Without the recorder the weak symbols are null: call them only when set.
 * (A function-like macro does not expand inside its own definition.) */
#define trace_on() (trace_on ? trace_on() : (void)0)
#define trace_off() (trace_off ? trace_off() : (void)0)
#define trace_mark(label) (trace_mark ? trace_mark(label) : (void)0)
#define mtrec_alloc(kind, ptr, size) (mtrec_alloc ? mtrec_alloc(kind, ptr, size) : (void)0)
#define mtrec_free(kind, ptr) (mtrec_free ? mtrec_free(kind, ptr) : (void)0)
#define mtrec_ref(kind, ptr) (mtrec_ref ? mtrec_ref(kind, ptr) : (void)0)
#define mtrec_unref(kind, ptr) (mtrec_unref ? mtrec_unref(kind, ptr) : (void)0)

#endif
