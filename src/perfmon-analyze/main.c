/* perfmon-analyze: the driver is cli.c beside this file, MPI in mpi.c. */
#include "analyze_cli.h"

int main(int argc, char **argv)
{
    return pm_analyze_mpi_main(argc, argv);
}
