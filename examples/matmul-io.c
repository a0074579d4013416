/* Placeholder so that `make` builds on the analysis branch: the Makefile's
 * `all` target names examples/matmul-io.c, which the sampler branch
 * provides.  On merge, take the sampler branch's version of this file. */
#include <stdio.h>

int main(void)
{
    puts("matmul-io: placeholder (see the sampler branch)");
    return 0;
}
