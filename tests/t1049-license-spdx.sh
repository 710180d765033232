#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t1049-license-spdx.sh -- the tree's license (LICENSE: LGPL-2.1-or-later)
# is said in every source file, in an SPDX-License-Identifier line among
# its first two (tests/spdx.sh); debian/copyright says the same.
. "$(dirname "$0")/lib.sh"

test_expect_success 'every source file has the SPDX line' '
	sh "$TOP/tests/spdx.sh"
'

test_expect_success 'LICENSE is the LGPL 2.1, debian/copyright names it' '
	grep -q "GNU LESSER GENERAL PUBLIC LICENSE" "$TOP/LICENSE" &&
	grep -q "Version 2.1, February 1999" "$TOP/LICENSE" &&
	grep -qx "License: LGPL-2.1+" "$TOP/debian/copyright"
'

test_expect_success 'a file without the line is named; --add gives it one, after a "#!"' '
	mkdir -p tree/tests tree/src &&
	cp "$TOP/tests/spdx.sh" tree/tests/ &&
	printf "int x;\n" >tree/src/a.c &&
	printf "#!/bin/sh\necho hi\n" >tree/src/s.sh && chmod +x tree/src/s.sh &&
	test_expect_code 1 sh tree/tests/spdx.sh >out &&
	grep -x "src/a.c: no .SPDX-License-Identifier: LGPL-2.1-or-later. in its first two lines" out &&
	grep "^src/s.sh: " out &&
	sh tree/tests/spdx.sh --add &&
	sh tree/tests/spdx.sh &&
	head -n 1 tree/src/a.c | grep -qx "/\* SPDX-License-Identifier: LGPL-2.1-or-later \*/" &&
	head -n 1 tree/src/s.sh | grep -qx "#!/bin/sh" &&
	sed -n 2p tree/src/s.sh | grep -qx "# SPDX-License-Identifier: LGPL-2.1-or-later" &&
	test -x tree/src/s.sh && sh tree/src/s.sh >hi && grep -qx hi hi
'

test_done
