#include "cli.h"
int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "servesim run: not built yet\n");
	return EXIT_FAIL;
}
