#include "docschema.h"

#include <stdio.h>

static const char *const type_words[] = {
	[DS_STR] = "a string",
	[DS_NUM] = "a number or null",
	[DS_INT] = "an integer",
	[DS_BOOL] = "true or false",
	[DS_OBJ] = "an object",
	[DS_ARR] = "an array",
	[DS_INT_ARR] = "an array of integers",
};

static const char *json_type_word(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	default:
		return "null";
	}
}

static bool int_in(const json_t *v, const struct docschema_field *f)
{
	return json_is_integer(v) && json_integer_value(v) >= f->min &&
	       json_integer_value(v) <= f->max;
}

static int check_at(const json_t *o, const struct docschema_field *schema, const char *where,
		    struct err *e);

/* Checks one value against its row; where names its container. */
static int check_value(const json_t *v, const struct docschema_field *f, const char *where,
		       struct err *e)
{
	char path[256];
	snprintf(path, sizeof path, "%s%s%s", where, where[0] ? "." : "", f->key);
	if (!v || json_is_null(v)) {
		if (f->optional || (v && f->type == DS_NUM))
			return 0;
		return err_set(e, "%s: missing; expected %s", path, type_words[f->type]);
	}
	bool ok;
	switch (f->type) {
	case DS_STR:
		ok = json_is_string(v);
		break;
	case DS_NUM:
		ok = json_is_number(v);
		break;
	case DS_INT:
		ok = int_in(v, f);
		break;
	case DS_BOOL:
		ok = json_is_boolean(v);
		break;
	case DS_OBJ:
		ok = json_is_object(v);
		break;
	default:
		ok = json_is_array(v);
		break;
	}
	if (!ok) {
		if (f->type == DS_INT && json_is_integer(v))
			return err_set(e, "%s: expected an integer from %lld to %lld, got %lld",
				       path, f->min, f->max, (long long)json_integer_value(v));
		return err_set(e, "%s: expected %s, got %s", path, type_words[f->type],
			       json_type_word(v));
	}
	if (f->type == DS_OBJ && f->sub)
		return check_at(v, f->sub, path, e);
	if (f->type == DS_ARR || f->type == DS_INT_ARR) {
		size_t i;
		const json_t *el;
		json_array_foreach(v, i, el)
		{
			char ipath[300];
			snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
			if (f->type == DS_INT_ARR && !int_in(el, f))
				return err_set(e,
					       "%s: expected an integer from %lld to %lld, got %s",
					       ipath, f->min, f->max, json_type_word(el));
			if (f->type == DS_ARR && f->sub) {
				if (!json_is_object(el))
					return err_set(e, "%s: expected an object, got %s", ipath,
						       json_type_word(el));
				if (check_at(el, f->sub, ipath, e))
					return -1;
			}
		}
	}
	return 0;
}

static int check_at(const json_t *o, const struct docschema_field *schema, const char *where,
		    struct err *e)
{
	for (const struct docschema_field *f = schema; f->key; f++)
		if (check_value(json_object_get(o, f->key), f, where, e))
			return -1;
	return 0;
}

int docschema_check(const json_t *o, const struct docschema_field *schema, struct err *e)
{
	if (!json_is_object(o))
		return err_set(e, "expected a JSON object, got %s", json_type_word(o));
	return schema ? check_at(o, schema, "", e) : 0;   /* a kind without one yet */
}
