/* Minimal unit-test helpers: each check prints PASS/FAIL lines that
 * tests/run.sh counts.  Real code under test, no mocks. */
#ifndef LODGE_UNIT_H
#define LODGE_UNIT_H

#include <stdio.h>

static int unit_failures;

#define CHECK(name, cond) do {                                               \
	if (cond) {                                                           \
		printf("PASS: %s\n", name);                                   \
	} else {                                                              \
		printf("FAIL: %s: %s (%s:%d)\n", name, #cond, __FILE__, __LINE__); \
		unit_failures++;                                              \
	}                                                                     \
} while (0)

#define UNIT_EXIT() return unit_failures ? 1 : 0

/* PATH holds TEXT (a fixture file; a failure shows in the checks that
 * read it). */
static inline void unit_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

#endif
