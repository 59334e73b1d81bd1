// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The library dlloop opens and closes: mapping it is all it is for. */
int tiny_answer(void)
{
	return 42;
}
