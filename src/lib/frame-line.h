/* One line describing a captured Ethernet frame, as `lodge capture` prints
 * it without -w: addresses, protocol, the few fields that say what it is. */
#ifndef LODGE_FRAME_LINE_H
#define LODGE_FRAME_LINE_H

#include <stddef.h>
#include <stdint.h>

/* caplen bytes captured of a frame of len bytes; the line goes to buf. */
void frame_line(const uint8_t *f, size_t caplen, size_t len, char *buf, size_t buflen);

#endif
