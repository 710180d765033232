/* mtrec.h -- scope what the mtrec recorder records.
 *
 *   trace_on();            start (or resume) recording
 *   trace_off();           stop recording until the next trace_on()
 *   trace_mark("label");   put a labelled mark in the trace
 *
 * The calls are weak: a program built with them links and runs normally
 * without the recorder, and then they do nothing.  glibc's mtrace() and
 * muntrace() from <mcheck.h> do the same as trace_on() and trace_off()
 * when the recorder is loaded.  With MTREC_SCOPED=1 nothing is recorded
 * until the first trace_on() or mtrace(). */
#ifndef MTREC_H
#define MTREC_H

#ifdef __cplusplus
extern "C" {
#endif

extern void trace_on(void) __attribute__((weak));
extern void trace_off(void) __attribute__((weak));
extern void trace_mark(const char *label) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* Without the recorder the weak symbols are null: call them only when set.
 * (A function-like macro does not expand inside its own definition.) */
#define trace_on() (trace_on ? trace_on() : (void)0)
#define trace_off() (trace_off ? trace_off() : (void)0)
#define trace_mark(label) (trace_mark ? trace_mark(label) : (void)0)

#endif
