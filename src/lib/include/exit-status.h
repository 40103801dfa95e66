/* The exit statuses every face of Lodge (the lodge command, the
 * dashboard) uses, as lodge(8) documents them (its EXIT STATUS section;
 * tests/integ/scripting.sh checks each one is there). */
#ifndef LODGE_EXIT_STATUS_H
#define LODGE_EXIT_STATUS_H

#define EXIT_OK      0
#define EXIT_FAILED  1      /* the command failed; one message says why */
#define EXIT_USAGE   2      /* the command line was wrong; usage printed */

#endif
