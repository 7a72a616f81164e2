/* report_page.h - the HTML page of weft report (report_page.c): what
 * goes before and after the JSON document report.c writes into it. */
#ifndef WEFT_REPORT_PAGE_H
#define WEFT_REPORT_PAGE_H

extern const char weft__report_head[];
extern const char weft__report_tail[];

#endif
