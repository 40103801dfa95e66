/* Bash completion's source (complete.c): lodge --complete INDEX WORD... */
#ifndef LODGE_COMPLETE_H
#define LODGE_COMPLETE_H

#include <stddef.h>

#include "cli.h"

int complete_main(const struct command *cmds, size_t ncmds, int argc, char **argv);

#endif
