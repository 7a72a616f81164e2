/* test_record.c - the record table's descriptors and the OTF2 enums of
 * its fields (proto/record.c, proto/enum.c): the kind counts the tests
 * use agree with the descriptors, every field whose C type is an OTF2
 * enum has that enum's values in weft_enums.def (else ingest would not
 * check it), and each enum's values are what its entry says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "enum.h"
#include "record.h"

/* C types of reference fields: the id spaces of the table. */
static const char *const ref_ctypes[] = {
#define WEFT_REFKIND(KIND, ctype, undef, scope) #ctype,
#include "weft_records.def"
};

/* OTF2 types of the table that are not enums. */
static const char *const plain_otf2_types[] = {
    "OTF2_TimeStamp", "OTF2_AttributeValue", "OTF2_MetricValue",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int listed(const char *const *list, size_t n, const char *ctype)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], ctype))
            return 1;
    return 0;
}

/* 1 if a field of C type `ctype` holds an OTF2 enum: an OTF2 type that is
 * neither a reference nor one of the plain types above. */
static int is_otf2_enum_type(const char *ctype)
{
    return !strncmp(ctype, "OTF2_", 5) &&
           !listed(ref_ctypes, N(ref_ctypes), ctype) &&
           !listed(plain_otf2_types, N(plain_otf2_types), ctype);
}

static void test_kind_counts(void **state)
{
    size_t n, defs = 0, events = 0, pseudo = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    (void)state;
    for (size_t i = 0; i < n; i++) {
        if (all[i]->is_event)
            events++;
        else if (all[i]->is_pseudo)
            pseudo++;
        else
            defs++;
    }
    assert_int_equal(defs, WEFT_DEF_KINDS);
    assert_int_equal(events, WEFT_EVENT_KINDS);
    assert_int_equal(pseudo, 1);
    assert_int_equal(n, WEFT_DEF_KINDS + WEFT_EVENT_KINDS + 1);
    assert_true(WEFT_DEF_KINDS > 0 && WEFT_EVENT_KINDS > 0);
}

/* The check below must tell enums from the rest. */
static void test_enum_type_recognised(void **state)
{
    (void)state;
    assert_true(is_otf2_enum_type("OTF2_RegionRole"));
    assert_true(is_otf2_enum_type("OTF2_SomeEnumOfALaterOtf2"));
    assert_false(is_otf2_enum_type("OTF2_RegionRef"));
    assert_false(is_otf2_enum_type("OTF2_TimeStamp"));
    assert_false(is_otf2_enum_type("uint32_t"));
    assert_int_equal(weft_enum_find("OTF2_SomeEnumOfALaterOtf2"), -1);
}

/* A record added with a field of an OTF2 enum that weft_enums.def lacks
 * fails here: ingest would not check its values. */
static void test_every_enum_field_has_values(void **state)
{
    size_t n, checked = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char missing[1024] = "";

    (void)state;
    for (size_t i = 0; i < n; i++) {
        for (unsigned k = 0; k < all[i]->nfields; k++) {
            const weft_field_desc *f = &all[i]->fields[k];
            if (!is_otf2_enum_type(f->ctype)) {
                assert_int_equal(f->enum_id, -1);
                continue;
            }
            if (f->enum_id < 0) {
                size_t len = strlen(missing);
                snprintf(missing + len, sizeof missing - len, " %s.%s (%s)",
                         all[i]->name, f->name, f->ctype);
                continue;
            }
            assert_string_equal(weft_enum_name(f->enum_id), f->ctype);
            checked++;
        }
    }
    if (missing[0])
        fail_msg("fields of an OTF2 enum without its values in "
                 "proto/weft_enums.def:%s", missing);
    assert_true(checked > 0);
}

/* Each enum's first and last values are valid and bound what is. */
static void test_enum_ranges(void **state)
{
    int id;

    (void)state;
    for (id = 0; strcmp(weft_enum_name(id), "?"); id++) {
        uint64_t first = weft_enum_first(id), last = weft_enum_last(id);
        assert_true(weft_enum_valid(id, first));
        assert_true(weft_enum_valid(id, last));
        assert_true(first <= last);
        if (weft_enum_is_flags(id)) {
            assert_int_equal(first, 0);
            assert_true(last != 0);
            if (last != UINT64_MAX)
                assert_false(weft_enum_valid(id, ~last));
            continue;
        }
        assert_false(weft_enum_valid(id, last + 1));
        if (first > 0)
            assert_false(weft_enum_valid(id, first - 1));
        assert_false(weft_enum_valid(id, UINT64_MAX));
    }
    assert_true(id > 0);
    /* Some known ones, from libotf2's constants. */
    id = weft_enum_find("OTF2_Type");
    assert_true(id >= 0);
    assert_int_equal(weft_enum_first(id), OTF2_TYPE_NONE);
    assert_int_equal(weft_enum_last(id), OTF2_TYPE_LOCATION_GROUP);
    id = weft_enum_find("OTF2_MeasurementMode");
    assert_int_equal(weft_enum_first(id), OTF2_MEASUREMENT_ON);
    assert_int_equal(weft_enum_last(id), OTF2_MEASUREMENT_OFF);
    id = weft_enum_find("OTF2_RegionFlag");
    assert_true(weft_enum_is_flags(id));
    assert_int_equal(weft_enum_last(id),
                     OTF2_REGION_FLAG_DYNAMIC | OTF2_REGION_FLAG_PHASE);
    /* No enum: nothing to check. */
    assert_true(weft_enum_valid(-1, UINT64_MAX));
    assert_false(weft_enum_is_flags(-1));
    assert_string_equal(weft_enum_name(-1), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_counts),
        cmocka_unit_test(test_enum_type_recognised),
        cmocka_unit_test(test_every_enum_field_has_values),
        cmocka_unit_test(test_enum_ranges),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
