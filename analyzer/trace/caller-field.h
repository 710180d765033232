/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* caller-field.h -- parsing the caller field of an event line
 * ("obj:(sym+off)[0xrel]", "obj:[0xrel]", "(sym+off)[0xrel]", "[0xaddr]"). */
#ifndef MTA_CALLER_FIELD_H
#define MTA_CALLER_FIELD_H

#include <glib.h>
#include <stdint.h>

typedef enum {
	MTA_CALLER_NONE,     /* empty or unparsable */
	MTA_CALLER_OBJ_SYM,  /* obj:(sym+off)[0xrel] */
	MTA_CALLER_OBJ,      /* obj:[0xrel] */
	MTA_CALLER_SYM,      /* (sym+off)[0xrel], dladdr gave no file name */
	MTA_CALLER_ABS,      /* [0xaddr]: dladdr failed, absolute address */
} MtaCallerForm;

typedef struct {
	MtaCallerForm form;
	char *object;        /* NULL unless OBJ_SYM / OBJ */
	char *symbol;        /* NULL unless OBJ_SYM / SYM */
	int64_t sym_offset;  /* signed offset from symbol */
	uint64_t addr;       /* rel (from the object base) or absolute */
} MtaCaller;

gboolean mta_caller_parse (const char *field, MtaCaller *out);
void mta_caller_clear (MtaCaller *c);

#endif
