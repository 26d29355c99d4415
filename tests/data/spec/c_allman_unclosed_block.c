#include <stddef.h>

size_t count_char(const char *s, char c)
{
    /* Count how often c occurs in the string s
       (the terminating NUL is not counted)‸
}
