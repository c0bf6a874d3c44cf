/* abi_asserts.c — pins the advice-table layout of aspects_abi.h. A change of any number here
 * is an ABI change: bump ASPECTS_ABI_VERSION and update Tests/AspectsTests/LayoutTests.swift. */
#include "aspects_abi.h"

#define PIN(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field)

_Static_assert(sizeof(aspects_table_header) == 256, "header size");
PIN(aspects_table_header, magic, 0);
PIN(aspects_table_header, abi_version, 8);
PIN(aspects_table_header, header_size, 12);
PIN(aspects_table_header, total_size, 16);
PIN(aspects_table_header, catalog_hash, 24);
PIN(aspects_table_header, group_capacity, 32);
PIN(aspects_table_header, rule_capacity, 36);
PIN(aspects_table_header, event_capacity, 40);
PIN(aspects_table_header, rule_size, 44);
PIN(aspects_table_header, event_size, 48);
PIN(aspects_table_header, writer_pid, 52);
PIN(aspects_table_header, armed_offset, 56);
PIN(aspects_table_header, lists_offset, 64);
PIN(aspects_table_header, rules_offset, 72);
PIN(aspects_table_header, events_offset, 80);
PIN(aspects_table_header, generation, 88);
PIN(aspects_table_header, next_rule_number, 96);
PIN(aspects_table_header, next_serial, 104);
PIN(aspects_table_header, event_head, 112);
PIN(aspects_table_header, next_hierarchy, 120);
PIN(aspects_table_header, created_ns, 128);

_Static_assert(sizeof(aspects_group_list) == 64, "group list size");
PIN(aspects_group_list, seq, 0);
PIN(aspects_group_list, count, 4);
PIN(aspects_group_list, rules, 8);

_Static_assert(sizeof(aspects_matcher) == 24, "matcher size");
PIN(aspects_matcher, arg, 0);
PIN(aspects_matcher, kind, 1);
PIN(aspects_matcher, type, 2);
PIN(aspects_matcher, str_off, 4);
PIN(aspects_matcher, str_len, 6);
PIN(aspects_matcher, a, 8);
PIN(aspects_matcher, b, 16);

_Static_assert(sizeof(aspects_hierarchy_counter) == 24, "hierarchy counter size");

_Static_assert(sizeof(aspects_rule) == 1280, "rule slot size");
PIN(aspects_rule, seq, 0);
PIN(aspects_rule, state, 4);
PIN(aspects_rule, group, 8);
PIN(aspects_rule, position, 12);
PIN(aspects_rule, id, 16);
PIN(aspects_rule, actions, 48);
PIN(aspects_rule, errno_value, 52);
PIN(aspects_rule, return_value, 56);
PIN(aspects_rule, delay_ns, 64);
PIN(aspects_rule, signal_number, 72);
PIN(aspects_rule, scope, 76);
PIN(aspects_rule, nth, 80);
PIN(aspects_rule, after, 88);
PIN(aspects_rule, every, 96);
PIN(aspects_rule, times, 104);
PIN(aspects_rule, probability, 112);
PIN(aspects_rule, seed, 120);
PIN(aspects_rule, flags, 128);
PIN(aspects_rule, matcher_count, 132);
PIN(aspects_rule, matchers, 136);
PIN(aspects_rule, arg_set_count, 232);
PIN(aspects_rule, arg_set_index, 236);
PIN(aspects_rule, arg_set_value, 240);
PIN(aspects_rule, serial, 272);
PIN(aspects_rule, added_ns, 280);
PIN(aspects_rule, removed_ns, 288);
PIN(aspects_rule, removed_by_pid, 296);
PIN(aspects_rule, named_export, 304);
PIN(aspects_rule, matched, 384);
PIN(aspects_rule, fired, 392);
PIN(aspects_rule, table_calls, 400);
PIN(aspects_rule, table_fired, 408);
PIN(aspects_rule, claim, 416);
PIN(aspects_rule, hierarchies, 424);
PIN(aspects_rule, strings, 768);

_Static_assert(sizeof(aspects_event) == 256, "event size");
PIN(aspects_event, seq, 0);
PIN(aspects_event, time_ns, 8);
PIN(aspects_event, pid, 16);
PIN(aspects_event, tid, 20);
PIN(aspects_event, hierarchy, 24);
PIN(aspects_event, rule_serial, 32);
PIN(aspects_event, call_number, 40);
PIN(aspects_event, seed, 48);
PIN(aspects_event, ret, 56);
PIN(aspects_event, err, 64);
PIN(aspects_event, kind, 68);
PIN(aspects_event, position, 70);
PIN(aspects_event, arg_count, 71);
PIN(aspects_event, rule_slot, 72);
PIN(aspects_event, group, 76);
PIN(aspects_event, export_index, 80);
PIN(aspects_event, arg_types, 84);
PIN(aspects_event, ret_type, 92);
PIN(aspects_event, string_arg, 93);
PIN(aspects_event, rule_id, 96);
PIN(aspects_event, args, 128);
PIN(aspects_event, string, 176);
