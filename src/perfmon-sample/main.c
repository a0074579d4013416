#include "perfmon/sampler.h"

int main(int argc, char **argv) { return pm_sample_main(argc, argv); }
