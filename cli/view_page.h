/* view_page.h - the page of `weft view` (cli/view_page.html, turned into
 * C by the build). */
#ifndef WEFT_CLI_VIEW_PAGE_H
#define WEFT_CLI_VIEW_PAGE_H

extern const char weft__view_page[];

#endif
