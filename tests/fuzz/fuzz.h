/* Shared by every fuzz harness.  Each harness defines
 * LLVMFuzzerTestOneInput(); built with clang -fsanitize=fuzzer it is a
 * libFuzzer target (`make fuzz`), built with FUZZ_REPLAY by any compiler it
 * is a program that runs the harness once per file named on its command
 * line (directories are read one level deep): the corpus and every crash
 * ever found, replayed by `make check`. */
#ifndef LODGE_FUZZ_H
#define LODGE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the code under test must keep whatever the input: abort
 * (libFuzzer saves the input as a crash) with the reason. */
#define FUZZ_CHECK(cond, what) do { \
	if (!(cond)) { fprintf(stderr, "fuzz: %s\n", what); abort(); } \
} while (0)

/* A message for a person holds no control character: an escape sequence
 * or a line break copied from the input would reach the terminal, or
 * split the one line a message is. */
static inline int fuzz_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

#ifdef FUZZ_REPLAY
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int fuzz_replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		perror(path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n > 0 ? n : 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, files = 0, bad = 0;

	for (i = 1; i < argc; i++) {
		struct stat sb;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode) && (d = opendir(argv[i]))) {
			while ((de = readdir(d))) {
				char path[4096];

				if (de->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
				bad += fuzz_replay_file(path);
				files++;
			}
			closedir(d);
		} else {
			bad += fuzz_replay_file(argv[i]);
			files++;
		}
	}
	printf("%d inputs replayed\n", files);
	return bad ? 1 : 0;
}
#endif

#endif
