// The system zlib (zlib1g-dev), for the compressed debug sections explore's symbolizer reads.
#include <zlib.h>
