/* attrs.c - a program that attaches attributes to some of its Enter
 * events through libweft's API (weft_evt_Enter's attribute list), for
 * tests/e2e_view.sh: inside "outer", 5 visits of "step" whose Enters
 * carry the step's number (UINT64), "odd" or "even" (STRING), half the
 * number (DOUBLE) and the region they are in (REGION), each followed by
 * a visit of "step" without attributes.
 */
#include <stdio.h>

#include "weft.h"

static int add(weft_attribute_list *al, OTF2_AttributeRef a, OTF2_Type t,
               OTF2_AttributeValue v)
{
    return weft_attribute_list_add(al, a, t, v);
}

int main(void)
{
    OTF2_RegionRef outer, step;
    weft_attribute_list *al;
    int rc = 0;

    if (weft_open() < 0)
        return 1;
    outer = weft_region("outer");
    step = weft_region("step");
    rc |= weft_def_Attribute(0, weft_string("iteration"),
                             weft_string("the step's number"),
                             OTF2_TYPE_UINT64);
    rc |= weft_def_Attribute(1, weft_string("parity"), weft_string(""),
                             OTF2_TYPE_STRING);
    rc |= weft_def_Attribute(2, weft_string("half"), weft_string(""),
                             OTF2_TYPE_DOUBLE);
    rc |= weft_def_Attribute(3, weft_string("within"), weft_string(""),
                             OTF2_TYPE_REGION);
    if (rc || !(al = weft_attribute_list_new()))
        return 1;
    rc |= weft_enter(outer);
    for (unsigned i = 0; i < 5; i++) {
        OTF2_AttributeValue v;
        weft_attribute_list_remove_all(al);
        v.uint64 = i;
        rc |= add(al, 0, OTF2_TYPE_UINT64, v);
        v.stringRef = weft_string(i % 2 ? "odd" : "even");
        rc |= add(al, 1, OTF2_TYPE_STRING, v);
        v.float64 = i * 0.5;
        rc |= add(al, 2, OTF2_TYPE_DOUBLE, v);
        v.regionRef = outer;
        rc |= add(al, 3, OTF2_TYPE_REGION, v);
        rc |= weft_evt_Enter(al, weft_time(), step);
        rc |= weft_leave(step);
        rc |= weft_enter(step);
        rc |= weft_leave(step);
    }
    rc |= weft_leave(outer);
    weft_attribute_list_free(al);
    if (rc)
        fprintf(stderr, "attrs: a weft call failed\n");
    return weft_close() < 0 || rc;
}
