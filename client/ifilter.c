/* ifilter.c - WEFT_FILTER parsing and matching (see ifilter.h for the
 * syntax). Parsing is strict: a rule list with a mistake in it is refused
 * as a whole, with a message saying which rule and why, rather than
 * guessed at.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ifilter.h"
#include "weft_errors.h"

#define NOINSTR __attribute__((no_instrument_function))
#define STR_(x) #x
#define STR(x) STR_(x)

NOINSTR static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

/* Checks one glob; NULL if fnmatch will read it as meant, else why not. */
NOINSTR static const char *check_glob(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (is_blank(p[i]))
            return "contains a blank (separate rules with commas)";
        if (p[i] == '\\') {
            if (++i == n)
                return "ends with a lone '\\'";
        } else if (p[i] == '[') {
            size_t j = i + 1;

            if (j < n && (p[j] == '!' || p[j] == '^'))
                j++;
            if (j < n && p[j] == ']')
                j++;
            while (j < n && p[j] != ']')
                j++;
            if (j == n)
                return "has a '[' without a closing ']'";
            i = j;
        }
    }
    return NULL;
}

/* Writes "WEFT_FILTER rule N ('text'): why" into err. */
NOINSTR static void rule_error(char *err, size_t err_len, size_t index,
                               const char *text, size_t len, const char *why)
{
    if (err && err_len)
        snprintf(err, err_len, "rule %zu ('%.*s') %s", index + 1,
                 (int)(len > 80 ? 80 : len), text, why);
}

NOINSTR int weft__ifilter_parse(const char *spec, weft__ifilter *f,
                                char *err, size_t err_len)
{
    weft__ifilter out = { 0, NULL };
    const char *p;
    size_t index = 0;
    int rc = 0;

    if (err && err_len)
        err[0] = '\0';
    f->n = 0;
    f->rules = NULL;
    if (!spec)
        return 0;
    for (p = spec; *p && is_blank(*p); p++)
        ;
    if (!*p)
        return 0;
    for (;;) {
        const char *start = p, *end = strchr(p, ',');
        const char *why;
        size_t len;
        size_t sign;
        int include = 1;
        char *pattern;

        if (!end)
            end = p + strlen(p);
        while (start < end && is_blank(*start))
            start++;
        len = (size_t)(end - start);
        while (len && is_blank(start[len - 1]))
            len--;
        if (len == 0) {
            rule_error(err, err_len, index, "", 0,
                       "is empty (two commas in a row, or a comma at an end)");
            rc = WEFT_EINVAL;
            goto out;
        }
        if (index == WEFT__IFILTER_MAX_RULES) {
            rule_error(err, err_len, index, start, len,
                       "is one too many (at most "
                       STR(WEFT__IFILTER_MAX_RULES) " rules)");
            rc = WEFT_EINVAL;
            goto out;
        }
        sign = start[0] == '+' || start[0] == '-';
        if (sign) {
            include = start[0] == '+';
            if (len == 1) {
                rule_error(err, err_len, index, start, len, "has no pattern");
                rc = WEFT_EINVAL;
                goto out;
            }
        }
        why = check_glob(start + sign, len - sign);
        if (!why && len - sign > WEFT__IFILTER_MAX_PATTERN)
            why = "is too long (at most " STR(WEFT__IFILTER_MAX_PATTERN)
                  " bytes)";
        if (why) {
            rule_error(err, err_len, index, start, len, why);
            rc = WEFT_EINVAL;
            goto out;
        }
        start += sign;
        len -= sign;
        if (index % 8 == 0) {
            weft__ifilter_rule *r =
                realloc(out.rules, (index + 8) * sizeof *out.rules);

            if (!r) {
                rc = WEFT_ENOMEM;
                goto out;
            }
            out.rules = r;
        }
        pattern = strndup(start, len);
        if (!pattern) {
            rc = WEFT_ENOMEM;
            goto out;
        }
        out.rules[index].include = include;
        out.rules[index].pattern = pattern;
        out.n = ++index;
        if (!*end)
            break;
        p = end + 1;
    }
    *f = out;
    return 0;
out:
    weft__ifilter_free(&out);
    return rc;
}

NOINSTR int weft__ifilter_match2(const weft__ifilter *f, const char *name,
                                 const char *alt)
{
    if (alt && strcmp(alt, name) == 0)
        alt = NULL;
    for (size_t i = 0; i < f->n; i++)
        if (fnmatch(f->rules[i].pattern, name, 0) == 0 ||
            (alt && fnmatch(f->rules[i].pattern, alt, 0) == 0))
            return f->rules[i].include;
    return 1;
}

NOINSTR int weft__ifilter_match(const weft__ifilter *f, const char *name)
{
    return weft__ifilter_match2(f, name, NULL);
}

NOINSTR void weft__ifilter_free(weft__ifilter *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->rules[i].pattern);
    free(f->rules);
    f->n = 0;
    f->rules = NULL;
}
