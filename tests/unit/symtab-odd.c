/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symtab-odd.c -- symbols that make dladdr()'s choice interesting, for the
 * symtab.c unit test.  Built into shared objects (GNU hash, DT_HASH,
 * both, stripped) and into the test executables themselves (-rdynamic).
 *
 * - odd_fn1 and odd_alias1: two names for one function (a tie: the first
 *   in _dl_addr's walk wins);
 * - odd_fn1_at: size 0 at odd_fn1's address (matches that address only);
 * - odd_zero: size 0 inside odd_fn2;
 * - odd_span: a sized symbol over odd_fn1, odd_fn2 and the static function
 *   between them (the highest start that contains the address wins, and
 *   where the inner ones end odd_span takes over again);
 * - odd_data with odd_inner nested in it, odd_prot (protected), odd_weak;
 * - odd_tls (STT_TLS) and odd_abs (SHN_ABS), which dladdr never names;
 * - odd_static: code no dynamic symbol covers but odd_span;
 * - in a non-PIE executable, odd_puts makes puts an undefined symbol with
 *   a value (its canonical PLT entry).
 */
#define NOINLINE __attribute__((noinline))

__thread int odd_tls = 5;
int odd_data[64] = { 1 };

static NOINLINE int odd_static(int x)
{
	return x * 7 + odd_data[x & 63];
}

int odd_fn1(int x)
{
	return x * 3 + odd_static(x);
}

int odd_fn2(int x)
{
	odd_data[x & 63] += x;
	return x * 5 + odd_fn1(x) + odd_tls;
}

int odd_alias1(int x) __attribute__((alias("odd_fn1")));
int odd_weak(int x) __attribute__((weak, alias("odd_fn2")));

__attribute__((visibility("protected"))) int odd_prot(int x)
{
	return odd_fn2(x) - 1;
}

extern int puts(const char *s);

void *odd_puts(void)
{
	return (void *)puts;
}

/* odd_end marks where odd_span ends: past every function above. */
int odd_end(int x)
{
	return x + 1;
}

__asm__(".globl odd_fn1_at\n"
	".type odd_fn1_at, @function\n"
	".set odd_fn1_at, odd_fn1\n"
	".globl odd_zero\n"
	".type odd_zero, @function\n"
	".set odd_zero, odd_fn2 + 4\n"
	".globl odd_span\n"
	".type odd_span, @function\n"
	".set odd_span, odd_static\n"
	".size odd_span, odd_end - odd_static\n"
	".globl odd_inner\n"
	".type odd_inner, @object\n"
	".set odd_inner, odd_data + 64\n"
	".size odd_inner, 16\n"
	".globl odd_abs\n"
	".set odd_abs, 0x1000\n");
