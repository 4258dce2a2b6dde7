#include "outfmt.h"

#include <math.h>

const char *const out_format_names[N_OUT_FORMATS] = {
	[FMT_TEXT] = "text", [FMT_JSON] = "json", [FMT_CSV] = "csv", [FMT_PROM] = "prom",
};

json_t *outfmt_num(double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *outfmt_real(double v, int digits)
{
	if (!isfinite(v))
		return json_null();
	double scale = pow(10, digits);
	return outfmt_num(round(v * scale) / scale);
}
