/* Paths built: one way for every part (lodge-hyp, the library, the
 * faces) to say a path did not fit (mkdirs.h makes them). */
#ifndef LODGE_PATHS_H
#define LODGE_PATHS_H

#include <stddef.h>

/* snprintf into out that says when the path did not fit: 0, or
 * -ENAMETOOLONG (out then holds a cut path no one should use). */
int path_printf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
