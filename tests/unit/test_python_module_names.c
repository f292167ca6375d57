/* test_python_module_names.c - a module range's name ("QUALNAME (Class)",
 * the root module by its class alone) split into the qualified name and
 * the class as module_sum shows them (model/python_stacks.h): the pure
 * function, with the forms the hook writes and the odd ones it could meet
 * (a class in parentheses, no class at all). */
#include <check.h>
#include <string.h>

#include "model/python_stacks.h"
#include "testutil.h"

static void split(const char *name, const char *qual, const char *cls)
{
	char buf[128];
	const char *q, *c;

	py_module__split(name, buf, sizeof buf, &q, &c);
	ck_assert_str_eq(q, qual);
	ck_assert_str_eq(c, cls);
}

START_TEST(module_name_splits_at_the_last_parenthesis)
{
	split("transformer.h.0.attn (GPT2Attention)", "transformer.h.0.attn", "GPT2Attention");
	split("GPT2LMHeadModel (GPT2LMHeadModel)", "GPT2LMHeadModel", "GPT2LMHeadModel");
	split("AdamW.step (AdamW)", "AdamW.step", "AdamW");
	split("blocks.1 (x) (Block)", "blocks.1 (x)", "Block");
}
END_TEST

START_TEST(module_name_without_a_class_is_all_qualified_name)
{
	split("encoder", "encoder", "");
	split("(Block)", "(Block)", "");
	split("encoder(Block)", "encoder(Block)", "");
	split("encoder (Block", "encoder (Block", "");
	split("", "", "");
	split(NULL, "", "");
}
END_TEST

START_TEST(module_name_longer_than_the_buffer_is_cut_not_overrun)
{
	char buf[8];
	const char *q, *c;

	py_module__split("transformer.h.0.attn (GPT2Attention)", buf, sizeof buf, &q, &c);
	ck_assert_str_eq(q, "transfo");
	ck_assert_str_eq(c, "");
}
END_TEST

START_TEST(direction_names_the_category)
{
	ck_assert_str_eq(py_direction__name(PY_FORWARD), "forward");
	ck_assert_str_eq(py_direction__name(PY_BACKWARD), "backward");
	ck_assert_str_eq(py_direction__name(PY_OPTIMIZER), "optimizer");
	ck_assert_str_eq(py_direction__name(7), "?");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("python_module_names");
	TCase *tc = tcase_create("split");

	tcase_add_test(tc, module_name_splits_at_the_last_parenthesis);
	tcase_add_test(tc, module_name_without_a_class_is_all_qualified_name);
	tcase_add_test(tc, module_name_longer_than_the_buffer_is_cut_not_overrun);
	tcase_add_test(tc, direction_names_the_category);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
