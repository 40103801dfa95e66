/* The version of Lodge, named in saved streams and by --version. */
#ifndef LODGE_VERSION_H
#define LODGE_VERSION_H

#define LODGE_VERSION "0.1.0"

#endif
