/* config.c: not written yet. */
typedef int kg_placeholder_config;
