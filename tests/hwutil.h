/*
 * hwutil: loading a catalog hardware profile or model by id in a test,
 * failing the test with the loader's message (test_devices.c,
 * test_backend_metal.c, test_collective.c). Header-only, static inline (a
 * test may use one of them): each test is its own executable.
 */
#ifndef SERVESIM_HWUTIL_H
#define SERVESIM_HWUTIL_H

#include "testutil.h"

#include "hwprofile.h"
#include "model.h"

static inline void load_hw(struct hw_profile *hw, const char *id)
{
	struct err e = { { 0 } };
	if (hw_load_named(hw, id, &e))
		fail_msg("%s", e.msg);
}

static inline void load_model(struct model *m, const char *id)
{
	struct err e = { { 0 } };
	if (model_load_named(m, id, &e))
		fail_msg("%s", e.msg);
}

#endif
