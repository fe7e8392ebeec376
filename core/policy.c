/* policy.c: not written yet. */
typedef int kg_placeholder_policy;
