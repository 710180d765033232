/* demangle.h -- C++ names as users read them: "shop::Cart::add(int)"
 * for "_ZN4shop4Cart3addEi", through the C++ runtime's own demangler. */
#ifndef MTA_DEMANGLE_H
#define MTA_DEMANGLE_H

#include <glib.h>

/* NAME demangled (free it), or NULL when NAME is no mangled C++ name
 * (or the C++ runtime is not on the machine). */
char *mta_demangle (const char *name);

#endif
