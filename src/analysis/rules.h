/* rules.h - the per-host rules read before the node figures
 * (rules.c).
 * Private to src/analysis. */
#ifndef PM_ANALYSIS_RULES_H
#define PM_ANALYSIS_RULES_H

#include "rule_plan.h"
#include "perfmon/analysis.h"

/* Fill a->rule_plan from the rules file (NULL without one); pm_rules_plan_free
 * frees it. */
int pm_rules_plan_load(pm_analysis *a, pm_error *err) PM_WUR;
void pm_rules_plan_free(pm_rule_plan *p);
/* Whether a slope rule of a->rule_plan reads metric id. */
int pm_rules_want_slope(const pm_analysis *a, const char *id);

#endif
