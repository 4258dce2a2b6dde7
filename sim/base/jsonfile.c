/*
 * jsonfile: reading one JSON document (jsonfile.h).
 */
#include "jsonfile.h"

json_t *jsonfile_load(const char *path, size_t flags, struct err *e)
{
	json_error_t je;
	json_t *doc = json_load_file(path, flags, &je);
	if (doc)
		return doc;
	if (je.line > 0)
		err_set(e, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
	else
		err_set(e, "%s: %s", path, je.text);   /* cannot open or read */
	return NULL;
}
