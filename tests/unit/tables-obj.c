int tables_obj_value(void) { return 42; }
