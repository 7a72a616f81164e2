/* path.c - a file's name from the path a program gave (see path.h). */
#include "path.h"

#include <string.h>

/* Appends the components of `s` to out[0..*n) (which holds no trailing
 * '/'), applying "." and "..". 0, or -1 when it does not fit. */
static int add_components(const char *s, char *out, size_t len, size_t *n)
{
    while (*s) {
        const char *end = strchr(s, '/');
        size_t k = end ? (size_t)(end - s) : strlen(s);

        if (k == 2 && s[0] == '.' && s[1] == '.') {
            while (*n > 0 && out[*n - 1] != '/')
                (*n)--;
            if (*n > 0)
                (*n)--; /* the '/' before the component */
        } else if (k > 0 && !(k == 1 && s[0] == '.')) {
            if (*n + 1 + k >= len)
                return -1;
            out[(*n)++] = '/';
            memcpy(out + *n, s, k);
            *n += k;
        }
        s += k;
        if (*s == '/')
            s++;
    }
    return 0;
}

int io_path_clean(const char *dir, const char *path, char *out, size_t len)
{
    size_t n = 0;

    if (len == 0)
        return -1;
    out[0] = 0;
    if (!path || !*path)
        return -1;
    if (path[0] != '/') {
        if (!dir || dir[0] != '/')
            return -1;
        if (add_components(dir, out, len, &n) < 0)
            goto too_long;
    }
    if (add_components(path, out, len, &n) < 0)
        goto too_long;
    if (n == 0) {
        if (len < 2)
            goto too_long;
        out[n++] = '/';
    }
    out[n] = 0;
    return 0;
too_long:
    out[0] = 0;
    return -1;
}
