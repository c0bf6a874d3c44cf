/* CAspectsAdvice: the C API of advice as code for Swift (the AspectsAdvice product). The header
 * is libaspects.so's own (include/aspects_advice.h links to Sources/CPreload's); its functions
 * are not here: libaspects.so defines them, and an advice library finds them in the process
 * that loads it. What is here is the one definition Swift cannot emit from a header: the
 * version of aspects_advice.h the library was built with, which the preload checks when it
 * loads the library (an object of another major version is refused). */
#include "aspects_advice.h"
