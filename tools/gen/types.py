# SPDX-License-Identifier: BSL-1.0
"""The one type table behind every typed OpenSHMEM routine of vkshmem.

tools/gen/gen.py reads this file and writes the C prototypes, the C11 _Generic
macros and the C++ forwarders.  It is plain data: no imports, and the only code
is the small constructors below, which build dictionaries.  Other generators
(collectives, contexts, signals, GLSL/HLSL wrappers, test type lists) are meant
to read the same tables.

Mirrors the OpenSHMEM 1.6 specification:
  * Table "Standard RMA Types and Names"           -> TYPES / TYPE_SETS["rma"]
  * sized RMA routines (8, 16, 32, 64, 128, mem)   -> SIZED, MEM
  * standard / extended / bitwise AMO type tables  -> TYPE_SETS["amo_*"]
  * point-to-point synchronization types           -> TYPE_SETS["p2p"]
  * the typed operation families                   -> FAMILIES

Note: this module is loaded by path (its name shadows the standard library's
`types`); never put tools/gen on sys.path and `import types`.
"""

# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------
# Table "Standard RMA Types and Names", in the specification's order.
#   ctype    the C type (TYPE in the specification)
#   name     TYPENAME, as it appears in routine names
#   kind     "float", "char", "sint" (signed integer) or "uint" (unsigned integer)
#   bits     width where C fixes it (fixed-width typedefs, IEEE float/double),
#            None where the platform decides
#   generic  True when the type is a distinct standard C type, so it may appear
#            in every C11 _Generic association list of its operations.
#   aliases  for a typedef (int64_t, size_t, ...): the standard C types it may be,
#            by TYPENAME.  Two compatible types in one association list are an
#            error, so a typedef joins a list only where none of these is there
#            already: int32_t and int64_t make the bitwise AMOs accept int and
#            long, int8_t..int64_t the bitwise reductions signed char..long,
#            while in the other lists the standard types already cover them.


def _t(ctype, name, kind, bits=None, generic=False, aliases=()):
    return {"ctype": ctype, "name": name, "kind": kind, "bits": bits, "generic": generic,
            "aliases": tuple(aliases)}


TYPES = [
    _t("float", "float", "float", 32, generic=True),
    _t("double", "double", "float", 64, generic=True),
    _t("long double", "longdouble", "float", generic=True),
    _t("char", "char", "char", 8, generic=True),
    _t("signed char", "schar", "sint", 8, generic=True),
    _t("short", "short", "sint", generic=True),
    _t("int", "int", "sint", generic=True),
    _t("long", "long", "sint", generic=True),
    _t("long long", "longlong", "sint", generic=True),
    _t("unsigned char", "uchar", "uint", 8, generic=True),
    _t("unsigned short", "ushort", "uint", generic=True),
    _t("unsigned int", "uint", "uint", generic=True),
    _t("unsigned long", "ulong", "uint", generic=True),
    _t("unsigned long long", "ulonglong", "uint", generic=True),
    _t("int8_t", "int8", "sint", 8, aliases=["schar"]),
    _t("int16_t", "int16", "sint", 16, aliases=["short"]),
    _t("int32_t", "int32", "sint", 32, aliases=["int", "long"]),
    _t("int64_t", "int64", "sint", 64, aliases=["long", "longlong"]),
    _t("uint8_t", "uint8", "uint", 8, aliases=["uchar"]),
    _t("uint16_t", "uint16", "uint", 16, aliases=["ushort"]),
    _t("uint32_t", "uint32", "uint", 32, aliases=["uint", "ulong"]),
    _t("uint64_t", "uint64", "uint", 64, aliases=["ulong", "ulonglong"]),
    _t("size_t", "size", "uint", aliases=["uint", "ulong", "ulonglong"]),
    _t("ptrdiff_t", "ptrdiff", "sint", aliases=["int", "long", "longlong"]),
    # Reductions and scans only (sum, prod).
    _t("double _Complex", "complexd", "complex", 128, generic=True),
    _t("float _Complex", "complexf", "complex", 64, generic=True),
]

# Named subsets of TYPES (by TYPENAME), each in the specification's table order.
_AMO_STANDARD = [
    "int", "long", "longlong", "uint", "ulong", "ulonglong",
    "int32", "int64", "uint32", "uint64", "size", "ptrdiff",
]

_REDUCE_BITWISE = [
    "uchar", "ushort", "uint", "ulong", "ulonglong",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "size",
]
_REDUCE_MINMAX = (["char", "schar", "short", "int", "long", "longlong", "ptrdiff"] + _REDUCE_BITWISE
                  + ["float", "double", "longdouble"])

TYPE_SETS = {
    # Table "Standard RMA Types and Names": every type.
    "rma": [t["name"] for t in TYPES if t["kind"] != "complex"],
    # Table "Standard AMO Types and Names".
    "amo_standard": list(_AMO_STANDARD),
    # Table "Extended AMO Types and Names": the standard ones plus float, double.
    "amo_extended": ["float", "double"] + _AMO_STANDARD,
    # Table "Bitwise AMO Types and Names".
    "amo_bitwise": ["uint", "ulong", "ulonglong", "int32", "int64", "uint32", "uint64"],
    # Table "Point-to-Point Synchronization Types and Names": the standard AMO
    # types, plus short and unsigned short (deprecated since 1.5, still generated).
    "p2p": _AMO_STANDARD + ["short", "ushort"],
    # Table "Reduction Types, Names and Supporting Operations": and/or/xor,
    # max/min (the bitwise ones plus signed and floating types), sum/prod
    # (max/min's plus the complex types); scans take sum's.
    "reduce_bitwise": _REDUCE_BITWISE,
    "reduce_minmax": _REDUCE_MINMAX,
    "reduce_arith": _REDUCE_MINMAX + ["complexd", "complexf"],
    # The deprecated shmem_TYPENAME_OP_to_all reductions (OpenSHMEM 1.4's table).
    "to_all_bitwise": ["short", "int", "long", "longlong"],
    "to_all_minmax": ["short", "int", "long", "longlong", "float", "double", "longdouble"],
    "to_all_arith": ["short", "int", "long", "longlong", "float", "double", "longdouble", "complexd", "complexf"],
}

# Sized RMA routines (shmem_put32, shmem_iget128, shmem_putmem, ...).
#   size  the suffix in the routine name
#   elem  the C++ element type the forwarder instantiates the template with
SIZED = [
    {"size": "8", "elem": "uint8_t"},
    {"size": "16", "elem": "uint16_t"},
    {"size": "32", "elem": "uint32_t"},
    {"size": "64", "elem": "uint64_t"},
    {"size": "128", "elem": "vkshmem::api::b128"},
]
MEM = [{"size": "mem", "elem": "unsigned char"}]
# Further lists of sizes: the deprecated active-set collectives come in 32 and 64 bits only.
SIZE_LISTS = {"sized_32_64": [r for r in SIZED if r["size"] in ("32", "64")]}

# ---------------------------------------------------------------------------
# Operation families
# ---------------------------------------------------------------------------
# Each family is a titled group of operations written to one C++ file.  Each
# operation is instantiated once per entry of its type lists:
#   name     C routine name pattern
#   ret      C return type pattern
#   params   [(C type pattern, parameter name), ...] in C order
#   call     the template in namespace vkshmem::api (src/api/typed.hpp); the
#            forwarder calls vkshmem::api::<call><ELEM>(<params in order>) and
#            static_casts void pointers to ELEM pointers
#   types    list of type lists: a TYPE_SETS key, "sized" or "mem"
#   generic  optional C11 generic macro name; its association list holds the
#            types of `types` marked generic, dispatching on *(on)
# Placeholders in patterns: {TYPE} (C type), {TYPENAME}, {SIZE} (sized only),
# {ELEM} (C++ element type: TYPE, or SIZED/MEM's elem).


def op(name, ret, params, call, types, generic=None, on=None):
    return {"name": name, "ret": ret, "params": params, "call": call,
            "types": types, "generic": generic, "on": on}


def family(id, title, file, ops, ctx=False):
    """ctx: every operation also gets its shmem_ctx_ twin (a shmem_ctx_t first, PEs numbered in the
    context's team); a generic macro then takes either argument list."""
    return {"id": id, "title": title, "file": file, "ops": ops, "ctx": ctx}


# Parameter lists shared by several operations.
_CONTIG = [("{TYPE} *", "dest"), ("const {TYPE} *", "source"), ("size_t", "nelems"), ("int", "pe")]
_STRIDED = [("{TYPE} *", "dest"), ("const {TYPE} *", "source"), ("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"),
            ("size_t", "nelems"), ("int", "pe")]
_VOID_CONTIG = [("void *", "dest"), ("const void *", "source"), ("size_t", "nelems"), ("int", "pe")]
_VOID_STRIDED = [("void *", "dest"), ("const void *", "source"), ("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"),
                 ("size_t", "nelems"), ("int", "pe")]

_DEST_PE = [("{TYPE} *", "dest"), ("int", "pe")]
_DEST_VALUE_PE = [("{TYPE} *", "dest"), ("{TYPE}", "value"), ("int", "pe")]
_DEST_COND_VALUE_PE = [("{TYPE} *", "dest"), ("{TYPE}", "cond"), ("{TYPE}", "value"), ("int", "pe")]
_FETCH = [("{TYPE} *", "fetch")]

_WAIT_ONE = [("{TYPE} *", "ivar"), ("int", "cmp"), ("{TYPE}", "cmp_value")]
_WAIT_SET = [("{TYPE} *", "ivars"), ("size_t", "nelems"), ("const int *", "status"), ("int", "cmp")]
_WAIT_SOME = [("{TYPE} *", "ivars"), ("size_t", "nelems"), ("size_t *", "indices"), ("const int *", "status"),
              ("int", "cmp")]
_VALUE = [("{TYPE}", "cmp_value")]
# The specification declares cmp_values without const (so must we: programs redeclare them).
_VALUES = [("{TYPE} *", "cmp_values")]

_RMA = ["rma"]
_STD = ["amo_standard"]
_EXT = ["amo_extended"]
_BIT = ["amo_bitwise"]
_P2P = ["p2p"]

FAMILIES = [
    family("rma", "Remote memory access, typed", "src/api/generated/rma.cpp", [
        op("shmem_{TYPENAME}_put", "void", _CONTIG, "put", _RMA, "shmem_put", "dest"),
        op("shmem_{TYPENAME}_get", "void", _CONTIG, "get", _RMA, "shmem_get", "dest"),
        op("shmem_{TYPENAME}_put_nbi", "void", _CONTIG, "put_nbi", _RMA, "shmem_put_nbi", "dest"),
        op("shmem_{TYPENAME}_get_nbi", "void", _CONTIG, "get_nbi", _RMA, "shmem_get_nbi", "dest"),
        op("shmem_{TYPENAME}_p", "void", [("{TYPE} *", "dest"), ("{TYPE}", "value"), ("int", "pe")],
           "p", _RMA, "shmem_p", "dest"),
        op("shmem_{TYPENAME}_g", "{TYPE}", [("const {TYPE} *", "source"), ("int", "pe")],
           "g", _RMA, "shmem_g", "source"),
        op("shmem_{TYPENAME}_iput", "void", _STRIDED, "iput", _RMA, "shmem_iput", "dest"),
        op("shmem_{TYPENAME}_iget", "void", _STRIDED, "iget", _RMA, "shmem_iget", "dest"),
    ], ctx=True),
    family("rma_sized", "Remote memory access, sized and untyped", "src/api/generated/rma.cpp", [
        op("shmem_put{SIZE}", "void", _VOID_CONTIG, "put", ["sized", "mem"]),
        op("shmem_get{SIZE}", "void", _VOID_CONTIG, "get", ["sized", "mem"]),
        op("shmem_put{SIZE}_nbi", "void", _VOID_CONTIG, "put_nbi", ["sized", "mem"]),
        op("shmem_get{SIZE}_nbi", "void", _VOID_CONTIG, "get_nbi", ["sized", "mem"]),
        op("shmem_iput{SIZE}", "void", _VOID_STRIDED, "iput", ["sized"]),
        op("shmem_iget{SIZE}", "void", _VOID_STRIDED, "iget", ["sized"]),
    ], ctx=True),
    family("amo", "Atomic memory operations, blocking", "src/api/generated/amo.cpp", [
        op("shmem_{TYPENAME}_atomic_fetch", "{TYPE}", [("const {TYPE} *", "source"), ("int", "pe")],
           "atomic_fetch", _EXT, "shmem_atomic_fetch", "source"),
        op("shmem_{TYPENAME}_atomic_set", "void", _DEST_VALUE_PE, "atomic_set", _EXT, "shmem_atomic_set", "dest"),
        op("shmem_{TYPENAME}_atomic_swap", "{TYPE}", _DEST_VALUE_PE, "atomic_swap", _EXT,
           "shmem_atomic_swap", "dest"),
        op("shmem_{TYPENAME}_atomic_compare_swap", "{TYPE}", _DEST_COND_VALUE_PE, "atomic_compare_swap", _STD,
           "shmem_atomic_compare_swap", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_inc", "{TYPE}", _DEST_PE, "atomic_fetch_inc", _STD,
           "shmem_atomic_fetch_inc", "dest"),
        op("shmem_{TYPENAME}_atomic_inc", "void", _DEST_PE, "atomic_inc", _STD, "shmem_atomic_inc", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_add", "{TYPE}", _DEST_VALUE_PE, "atomic_fetch_add", _STD,
           "shmem_atomic_fetch_add", "dest"),
        op("shmem_{TYPENAME}_atomic_add", "void", _DEST_VALUE_PE, "atomic_add", _STD, "shmem_atomic_add", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_and", "{TYPE}", _DEST_VALUE_PE, "atomic_fetch_and", _BIT,
           "shmem_atomic_fetch_and", "dest"),
        op("shmem_{TYPENAME}_atomic_and", "void", _DEST_VALUE_PE, "atomic_and", _BIT, "shmem_atomic_and", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_or", "{TYPE}", _DEST_VALUE_PE, "atomic_fetch_or", _BIT,
           "shmem_atomic_fetch_or", "dest"),
        op("shmem_{TYPENAME}_atomic_or", "void", _DEST_VALUE_PE, "atomic_or", _BIT, "shmem_atomic_or", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_xor", "{TYPE}", _DEST_VALUE_PE, "atomic_fetch_xor", _BIT,
           "shmem_atomic_fetch_xor", "dest"),
        op("shmem_{TYPENAME}_atomic_xor", "void", _DEST_VALUE_PE, "atomic_xor", _BIT, "shmem_atomic_xor", "dest"),
    ], ctx=True),
    family("amo_nbi", "Atomic memory operations, non-blocking fetching", "src/api/generated/amo.cpp", [
        op("shmem_{TYPENAME}_atomic_fetch_nbi", "void", _FETCH + [("const {TYPE} *", "source"), ("int", "pe")],
           "atomic_fetch_nbi", _EXT, "shmem_atomic_fetch_nbi", "source"),
        op("shmem_{TYPENAME}_atomic_swap_nbi", "void", _FETCH + _DEST_VALUE_PE, "atomic_swap_nbi", _EXT,
           "shmem_atomic_swap_nbi", "dest"),
        op("shmem_{TYPENAME}_atomic_compare_swap_nbi", "void", _FETCH + _DEST_COND_VALUE_PE,
           "atomic_compare_swap_nbi", _STD, "shmem_atomic_compare_swap_nbi", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_inc_nbi", "void", _FETCH + _DEST_PE, "atomic_fetch_inc_nbi", _STD,
           "shmem_atomic_fetch_inc_nbi", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_add_nbi", "void", _FETCH + _DEST_VALUE_PE, "atomic_fetch_add_nbi", _STD,
           "shmem_atomic_fetch_add_nbi", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_and_nbi", "void", _FETCH + _DEST_VALUE_PE, "atomic_fetch_and_nbi", _BIT,
           "shmem_atomic_fetch_and_nbi", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_or_nbi", "void", _FETCH + _DEST_VALUE_PE, "atomic_fetch_or_nbi", _BIT,
           "shmem_atomic_fetch_or_nbi", "dest"),
        op("shmem_{TYPENAME}_atomic_fetch_xor_nbi", "void", _FETCH + _DEST_VALUE_PE, "atomic_fetch_xor_nbi", _BIT,
           "shmem_atomic_fetch_xor_nbi", "dest"),
    ], ctx=True),
    family("p2p", "Point-to-point synchronization", "src/api/generated/p2p.cpp", [
        op("shmem_{TYPENAME}_wait_until", "void", _WAIT_ONE, "wait_until", _P2P, "shmem_wait_until", "ivar"),
        op("shmem_{TYPENAME}_wait_until_all", "void", _WAIT_SET + _VALUE, "wait_until_all", _P2P,
           "shmem_wait_until_all", "ivars"),
        op("shmem_{TYPENAME}_wait_until_any", "size_t", _WAIT_SET + _VALUE, "wait_until_any", _P2P,
           "shmem_wait_until_any", "ivars"),
        op("shmem_{TYPENAME}_wait_until_some", "size_t", _WAIT_SOME + _VALUE, "wait_until_some", _P2P,
           "shmem_wait_until_some", "ivars"),
        op("shmem_{TYPENAME}_wait_until_all_vector", "void", _WAIT_SET + _VALUES, "wait_until_all_vector", _P2P,
           "shmem_wait_until_all_vector", "ivars"),
        op("shmem_{TYPENAME}_wait_until_any_vector", "size_t", _WAIT_SET + _VALUES, "wait_until_any_vector", _P2P,
           "shmem_wait_until_any_vector", "ivars"),
        op("shmem_{TYPENAME}_wait_until_some_vector", "size_t", _WAIT_SOME + _VALUES, "wait_until_some_vector",
           _P2P, "shmem_wait_until_some_vector", "ivars"),
        op("shmem_{TYPENAME}_test", "int", _WAIT_ONE, "test", _P2P, "shmem_test", "ivar"),
        op("shmem_{TYPENAME}_test_all", "int", _WAIT_SET + _VALUE, "test_all", _P2P, "shmem_test_all", "ivars"),
        op("shmem_{TYPENAME}_test_any", "size_t", _WAIT_SET + _VALUE, "test_any", _P2P, "shmem_test_any", "ivars"),
        op("shmem_{TYPENAME}_test_some", "size_t", _WAIT_SOME + _VALUE, "test_some", _P2P,
           "shmem_test_some", "ivars"),
        op("shmem_{TYPENAME}_test_all_vector", "int", _WAIT_SET + _VALUES, "test_all_vector", _P2P,
           "shmem_test_all_vector", "ivars"),
        op("shmem_{TYPENAME}_test_any_vector", "size_t", _WAIT_SET + _VALUES, "test_any_vector", _P2P,
           "shmem_test_any_vector", "ivars"),
        op("shmem_{TYPENAME}_test_some_vector", "size_t", _WAIT_SOME + _VALUES, "test_some_vector", _P2P,
           "shmem_test_some_vector", "ivars"),
    ]),
]

# Collectives on teams (src/coll through the templates of src/api/typed.hpp).
_TEAM_CONTIG = [("shmem_team_t", "team"), ("{TYPE} *", "dest"), ("const {TYPE} *", "source"), ("size_t", "nelems")]
_TEAM_VOID = [("shmem_team_t", "team"), ("void *", "dest"), ("const void *", "source"), ("size_t", "nelems")]
_TEAM_REDUCE = [("shmem_team_t", "team"), ("{TYPE} *", "dest"), ("const {TYPE} *", "source"), ("size_t", "nreduce")]
_ROOT = [("int", "PE_root")]
_STRIDES = [("ptrdiff_t", "dst"), ("ptrdiff_t", "sst")]


def _team_strided(params):
    return params[:3] + _STRIDES + params[3:]


FAMILIES += [
    family("coll", "Collectives on teams, typed", "src/api/generated/coll.cpp", [
        op("shmem_{TYPENAME}_broadcast", "int", _TEAM_CONTIG + _ROOT, "broadcast", _RMA, "shmem_broadcast", "dest"),
        op("shmem_{TYPENAME}_collect", "int", _TEAM_CONTIG, "collect", _RMA, "shmem_collect", "dest"),
        op("shmem_{TYPENAME}_fcollect", "int", _TEAM_CONTIG, "fcollect", _RMA, "shmem_fcollect", "dest"),
        op("shmem_{TYPENAME}_alltoall", "int", _TEAM_CONTIG, "alltoall", _RMA, "shmem_alltoall", "dest"),
        op("shmem_{TYPENAME}_alltoalls", "int", _team_strided(_TEAM_CONTIG), "alltoalls", _RMA,
           "shmem_alltoalls", "dest"),
    ]),
    family("coll_mem", "Collectives on teams, untyped", "src/api/generated/coll.cpp", [
        op("shmem_broadcast{SIZE}", "int", _TEAM_VOID + _ROOT, "broadcast", ["mem"]),
        op("shmem_collect{SIZE}", "int", _TEAM_VOID, "collect", ["mem"]),
        op("shmem_fcollect{SIZE}", "int", _TEAM_VOID, "fcollect", ["mem"]),
        op("shmem_alltoall{SIZE}", "int", _TEAM_VOID, "alltoall", ["mem"]),
        op("shmem_alltoalls{SIZE}", "int", _team_strided(_TEAM_VOID), "alltoalls", ["mem"]),
    ]),
    family("reduce", "Reductions and scans on teams", "src/api/generated/reduce.cpp", [
        op("shmem_{TYPENAME}_" + name + "_reduce", "int", _TEAM_REDUCE, name + "_reduce", ["reduce_" + types],
           "shmem_" + name + "_reduce", "dest")
        for name, types in [("and", "bitwise"), ("or", "bitwise"), ("xor", "bitwise"), ("max", "minmax"),
                            ("min", "minmax"), ("sum", "arith"), ("prod", "arith")]
    ] + [
        op("shmem_{TYPENAME}_sum_inscan", "int", _TEAM_CONTIG, "sum_inscan", ["reduce_arith"], "shmem_sum_inscan",
           "dest"),
        op("shmem_{TYPENAME}_sum_exscan", "int", _TEAM_CONTIG, "sum_exscan", ["reduce_arith"], "shmem_sum_exscan",
           "dest"),
    ]),
]

# Deprecated collectives on active sets (PE_start, logPE_stride, PE_size) with a pSync array.
_ASET = [("int", "PE_start"), ("int", "logPE_stride"), ("int", "PE_size")]
_PSYNC = [("long *", "pSync")]
_VOID_SET = [("void *", "dest"), ("const void *", "source"), ("size_t", "nelems")]
_TO_ALL = [("{TYPE} *", "dest"), ("const {TYPE} *", "source"), ("int", "nreduce")] + _ASET + [("{TYPE} *", "pWrk")]

FAMILIES += [
    family("coll_active_set", "Deprecated: collectives on active sets", "src/api/generated/active_set.cpp", [
        op("shmem_broadcast{SIZE}", "void", _VOID_SET + _ROOT + _ASET + _PSYNC, "broadcast_set", ["sized_32_64"]),
        op("shmem_collect{SIZE}", "void", _VOID_SET + _ASET + _PSYNC, "collect_set", ["sized_32_64"]),
        op("shmem_fcollect{SIZE}", "void", _VOID_SET + _ASET + _PSYNC, "fcollect_set", ["sized_32_64"]),
        op("shmem_alltoall{SIZE}", "void", _VOID_SET + _ASET + _PSYNC, "alltoall_set", ["sized_32_64"]),
        op("shmem_alltoalls{SIZE}", "void", _VOID_SET[:2] + _STRIDES + _VOID_SET[2:] + _ASET + _PSYNC,
           "alltoalls_set", ["sized_32_64"]),
    ]),
    family("to_all", "Deprecated: reductions on active sets", "src/api/generated/active_set.cpp", [
        op("shmem_{TYPENAME}_" + name + "_to_all", "void", _TO_ALL + _PSYNC, name + "_to_all", ["to_all_" + types])
        for name, types in [("and", "bitwise"), ("or", "bitwise"), ("xor", "bitwise"), ("max", "minmax"),
                            ("min", "minmax"), ("sum", "arith"), ("prod", "arith")]
    ]),
]

# ---- Put with signal, strided blocks (1.6) and the deprecated names --------------------------
# Kept in one block, apart from the families above, so that other families can be added there.
_SIGNAL = [("uint64_t *", "sig_addr"), ("uint64_t", "signal"), ("int", "sig_op"), ("int", "pe")]
_BLOCKS = [("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"), ("size_t", "bsize"), ("size_t", "nblocks"), ("int", "pe")]
_BSTRIDED = [("{TYPE} *", "dest"), ("const {TYPE} *", "source")] + _BLOCKS
_VOID_BSTRIDED = [("void *", "dest"), ("const void *", "source")] + _BLOCKS
_CONTIG_SIGNAL = _CONTIG[:3] + _SIGNAL
_VOID_CONTIG_SIGNAL = _VOID_CONTIG[:3] + _SIGNAL

# The deprecated names shmem_TYPENAME_fadd, _finc, _cswap, _add, _inc (1.3's int, long, longlong)
# and _swap, _fetch, _set (with float, double) come for every type of today's standard and extended
# AMO tables, as older codes call them; shmem_TYPENAME_wait for the point-to-point types.
TYPE_SETS.update({
    "amo_deprecated_standard": list(_AMO_STANDARD),
    "amo_deprecated_extended": ["float", "double"] + _AMO_STANDARD,
    "p2p_deprecated": ["short", "int", "long", "longlong", "ushort", "uint", "ulong", "ulonglong",
                       "int32", "int64", "uint32", "uint64", "size", "ptrdiff"],
})
_DSTD = ["amo_deprecated_standard"]
_DEXT = ["amo_deprecated_extended"]

FAMILIES += [
    family("signal", "Put with signal", "src/api/generated/signal.cpp", [
        op("shmem_{TYPENAME}_put_signal", "void", _CONTIG_SIGNAL, "put_signal", _RMA, "shmem_put_signal", "dest"),
        op("shmem_{TYPENAME}_put_signal_nbi", "void", _CONTIG_SIGNAL, "put_signal_nbi", _RMA,
           "shmem_put_signal_nbi", "dest"),
        op("shmem_put{SIZE}_signal", "void", _VOID_CONTIG_SIGNAL, "put_signal", ["sized", "mem"]),
        op("shmem_put{SIZE}_signal_nbi", "void", _VOID_CONTIG_SIGNAL, "put_signal_nbi", ["sized", "mem"]),
    ], ctx=True),
    family("rma_blocks", "Remote memory access, strided blocks", "src/api/generated/blocks.cpp", [
        op("shmem_{TYPENAME}_ibput", "void", _BSTRIDED, "ibput", _RMA, "shmem_ibput", "dest"),
        op("shmem_{TYPENAME}_ibget", "void", _BSTRIDED, "ibget", _RMA, "shmem_ibget", "dest"),
        op("shmem_ibput{SIZE}", "void", _VOID_BSTRIDED, "ibput", ["sized"]),
        op("shmem_ibget{SIZE}", "void", _VOID_BSTRIDED, "ibget", ["sized"]),
    ], ctx=True),
    # Deprecated since OpenSHMEM 1.4 (AMOs) and 1.5 (shmem_TYPENAME_wait): the same operations
    # as shmem_TYPENAME_atomic_* and shmem_TYPENAME_wait_until(ivar, SHMEM_CMP_NE, value).
    family("deprecated", "DEPRECATED: pre-1.4 atomic names and shmem_TYPENAME_wait (use shmem_atomic_*, "
           "shmem_wait_until)", "src/api/generated/deprecated.cpp", [
        op("shmem_{TYPENAME}_fadd", "{TYPE}", _DEST_VALUE_PE, "atomic_fetch_add", _DSTD, "shmem_fadd", "dest"),
        op("shmem_{TYPENAME}_finc", "{TYPE}", _DEST_PE, "atomic_fetch_inc", _DSTD, "shmem_finc", "dest"),
        op("shmem_{TYPENAME}_cswap", "{TYPE}", _DEST_COND_VALUE_PE, "atomic_compare_swap", _DSTD, "shmem_cswap",
           "dest"),
        op("shmem_{TYPENAME}_swap", "{TYPE}", _DEST_VALUE_PE, "atomic_swap", _DEXT, "shmem_swap", "dest"),
        op("shmem_{TYPENAME}_add", "void", _DEST_VALUE_PE, "atomic_add", _DSTD, "shmem_add", "dest"),
        op("shmem_{TYPENAME}_inc", "void", _DEST_PE, "atomic_inc", _DSTD, "shmem_inc", "dest"),
        op("shmem_{TYPENAME}_fetch", "{TYPE}", [("const {TYPE} *", "source"), ("int", "pe")], "atomic_fetch", _DEXT,
           "shmem_fetch", "source"),
        op("shmem_{TYPENAME}_set", "void", _DEST_VALUE_PE, "atomic_set", _DEXT, "shmem_set", "dest"),
        op("shmem_{TYPENAME}_wait", "void", [("{TYPE} *", "ivar"), ("{TYPE}", "cmp_value")], "wait_while_equal",
           ["p2p_deprecated"], "shmem_wait", "ivar"),
    ]),
]

# Constants that host programs and shaders name alike: (name, value, in shmem.h).
# shmem.h gets those marked True (through HEADER); the device libraries get all
# of them (CONSTANTS_HEADER).
CONSTANTS = [
    ("SHMEM_CMP_EQ", 0, True),
    ("SHMEM_CMP_NE", 1, True),
    ("SHMEM_CMP_GT", 2, True),
    ("SHMEM_CMP_GE", 3, True),
    ("SHMEM_CMP_LT", 4, True),
    ("SHMEM_CMP_LE", 5, True),
    ("SHMEM_SIGNAL_SET", 0, True),
    ("SHMEM_SIGNAL_ADD", 1, True),
]
CONSTANTS_HEADER = "shaders/generated/vkshmem_constants.h"

# The C header that receives every prototype and generic macro.
HEADER = "include/vkshmem/shmem_typed.h"
# The compile test of every generic interface with every type of its table (compiled as C11 and C++).
GENERIC_TEST = "tests/compile/generated/generics"
# The CMake fragment that lists the generated C++ files.
SOURCES_CMAKE = "src/api/generated/sources.cmake"
# The profiling interface (OpenSHMEM 1.5-1.6, "Profiling Interface"): pshmem_ prototypes of every
# routine <shmem.h> declares, the library's name-shifted entry points (linker script aliases), and
# a program that takes the address of each.
PSHMEM_HEADER = "include/pshmem.h"
PSHMEM_ALIASES = "src/api/generated/pshmem.ld"
PSHMEM_TEST = "tests/integration/generated/pshmem_names.c"
PUBLIC_HEADER = "include/shmem.h"
# The most lines one generated C++ file may have; move a family to another
# file (its "file" above) when the generator reports one is over.
MAX_CPP_LINES = 1500

# ---------------------------------------------------------------------------
# GLSL device library (shaders/generated/vkshmem_typed.glsl)
# ---------------------------------------------------------------------------
# How a TYPENAME appears in GLSL compute shaders (GL_EXT_shader_explicit_arithmetic_types_int64).
# A type missing here has no GLSL routines (long double: no GLSL type, platform layout).
#   glsl    the GLSL type of values, or None: the type gets only the bulk routines (put/get/...,
#           which take addresses and counts), not p/g/atomics/waits, because GLSL has no 8/16-bit
#           arithmetic types without extra device features, and sub-word stores need masking
#   size    bytes per element (long/size/ptrdiff: LP64, as on every platform vkshmem supports)
#   signed  compared as signed by wait_until/test
#   to_bits / from_bits  the conversion to and from the core's bit pattern (uint or uint64_t);
#           {} is the value


def _gl(glsl, size, signed=False, to_bits="{}", from_bits="{}"):
    return {"glsl": glsl, "size": size, "signed": signed, "to_bits": to_bits, "from_bits": from_bits}


_GL_I32 = _gl("int", 4, True, "uint({})", "int({})")
_GL_U32 = _gl("uint", 4)
_GL_I64 = _gl("int64_t", 8, True, "uint64_t({})", "int64_t({})")
_GL_U64 = _gl("uint64_t", 8)

GLSL_TYPES = {
    "float": _gl("float", 4, True, "floatBitsToUint({})", "uintBitsToFloat({})"),
    "double": _gl("double", 8, True, "doubleBitsToUint64({})", "uint64BitsToDouble({})"),
    "char": _gl(None, 1),
    "schar": _gl(None, 1),
    "short": _gl(None, 2),
    "int": _GL_I32,
    "long": _GL_I64,
    "longlong": _GL_I64,
    "uchar": _gl(None, 1),
    "ushort": _gl(None, 2),
    "uint": _GL_U32,
    "ulong": _GL_U64,
    "ulonglong": _GL_U64,
    "int8": _gl(None, 1),
    "int16": _gl(None, 2),
    "int32": _GL_I32,
    "int64": _GL_I64,
    "uint8": _gl(None, 1),
    "uint16": _gl(None, 2),
    "uint32": _GL_U32,
    "uint64": _GL_U64,
    "size": _GL_U64,
    "ptrdiff": _GL_I64,
}

# Sized routines in GLSL (shmem_put32, ...): the name suffix and the bytes per element.
GLSL_SIZED = [
    {"size": "8", "bytes": 1},
    {"size": "16", "bytes": 2},
    {"size": "32", "bytes": 4},
    {"size": "64", "bytes": 8},
    {"size": "128", "bytes": 16},
]


# A GLSL routine: its name, return type and parameters (patterns), and the body: one call into the
# hand-written core of shaders/vkshmem.glsl.
#   types  type lists: TYPE_SETS keys (restricted to GLSL_TYPES, and to types with a GLSL value
#          type when the routine has a {TYPE} parameter or result) or "sized"
# Placeholders: {TYPENAME}, {TYPE} (GLSL type), {BYTES} (element size), {W} (core width: 32 or
# 64), {BITS} (core type: uint or uint64_t), {SGN} (true/false), {SIZE} (sized only), and
# {<param>_bits} for each {TYPE} parameter (the value as core bits). A {TYPE} result is converted
# back from the core's bits.
#   values  only types with a GLSL value type, though no parameter has one (reductions: the core
#           computes on elements; 1- and 2-byte types have no GLSL arithmetic)
# Further placeholders: {RK} (the reduction core's element kind) and {RCORE} (the reduction core:
# one of its own for double, so that only shaders reducing doubles need shaderFloat64).
def glsl_op(name, ret, params, body, types, values=False):
    return {"name": name, "ret": ret, "params": params, "body": body, "types": types, "values": values}


_G_CONTIG = [("uint64_t", "dest"), ("uint64_t", "source"), ("uint64_t", "nelems"), ("int", "pe")]
_G_SIGNAL = _G_CONTIG[:3] + [("uint64_t", "sig_addr"), ("uint64_t", "signal"), ("int", "sig_op"), ("int", "pe")]
_G_DEST_PE = [("uint64_t", "dest"), ("int", "pe")]
_G_DEST_VALUE_PE = [("uint64_t", "dest"), ("{TYPE}", "value"), ("int", "pe")]
_G_WAIT = [("uint64_t", "ivar"), ("int", "cmp"), ("{TYPE}", "cmp_value")]
_G_BYTES = "nelems * uint64_t({BYTES})"


def _g_amo(op, fetch, operand="{BITS}(0)", cond="{BITS}(0)", target="dest"):
    return f"vkshmem_amo{{W}}_({target}, VKSHMEM_AMO_{op}, {operand}, {cond}, pe, {fetch})"


_G_TEAM = [("shmem_team_t", "team"), ("uint64_t", "dest"), ("uint64_t", "source"), ("uint64_t", "nelems")]
_G_BCAST = _G_TEAM + [("int", "PE_root")]
_G_REDUCE = _G_TEAM[:3] + [("uint64_t", "nreduce")]


def _coll_families(lang, make, nbytes, rcore):
    """The team collectives of a device library (lang "glsl" or "hlsl", its op constructor, its
    byte-count expression and its reduction core): every typed and mem data collective and every
    reduction of the spec's table, each as a thread and a workgroup (_wg) routine."""
    forms = (("", "false"), ("_wg", "true"))

    def coll(name, params):
        args = f"team, dest, source, {nbytes}" + (", PE_root" if params is _G_BCAST else "")
        return [make(pattern + suffix, "int", params, f"vkshmem_{name}_({args}, {wg})", types)
                for pattern, types in ((f"shmem_{{TYPENAME}}_{name}", _RMA), (f"shmem_{name}mem", ["mem"]))
                for suffix, wg in forms]

    def reduce(ops, types):
        return [make(f"shmem_{{TYPENAME}}_{op.lower()}_reduce{suffix}", "int", _G_REDUCE,
                     f"{rcore}(team, dest, source, nreduce, {{RK}}, VKSHMEM_RED_{op}, {wg})", [types], values=True)
                for op in ops for suffix, wg in forms]

    return [
        family(f"{lang}_coll", "Collectives (team-based, thread and workgroup forms)", None,
               coll("broadcast", _G_BCAST) + coll("collect", _G_TEAM) + coll("fcollect", _G_TEAM) +
               coll("alltoall", _G_TEAM)),
        family(f"{lang}_reduce", "Reductions (team-based, thread and workgroup forms)", None,
               reduce(("AND", "OR", "XOR"), "reduce_bitwise") + reduce(("MAX", "MIN"), "reduce_minmax") +
               reduce(("SUM", "PROD"), "reduce_arith")),
    ]


GLSL_FAMILIES = [
    family("glsl_rma", "Remote memory access", None, [
        glsl_op("shmem_{TYPENAME}_put", "void", _G_CONTIG, "vkshmem_put_(dest, source, " + _G_BYTES + ", pe)", _RMA),
        glsl_op("shmem_{TYPENAME}_get", "void", _G_CONTIG, "vkshmem_get_(dest, source, " + _G_BYTES + ", pe)", _RMA),
        glsl_op("shmem_{TYPENAME}_put_nbi", "void", _G_CONTIG, "vkshmem_put_(dest, source, " + _G_BYTES + ", pe)",
                _RMA),
        glsl_op("shmem_{TYPENAME}_get_nbi", "void", _G_CONTIG, "vkshmem_get_(dest, source, " + _G_BYTES + ", pe)",
                _RMA),
        glsl_op("shmem_{TYPENAME}_put_wg", "void", _G_CONTIG, "vkshmem_put_wg_(dest, source, " + _G_BYTES + ", pe)",
                _RMA),
        glsl_op("shmem_{TYPENAME}_get_wg", "void", _G_CONTIG, "vkshmem_get_wg_(dest, source, " + _G_BYTES + ", pe)",
                _RMA),
        glsl_op("shmem_{TYPENAME}_p", "void", _G_DEST_VALUE_PE, "vkshmem_p{W}_(dest, {value_bits}, pe)", _RMA),
        glsl_op("shmem_{TYPENAME}_g", "{TYPE}", [("uint64_t", "source"), ("int", "pe")], "vkshmem_g{W}_(source, pe)",
                _RMA),
    ]),
    family("glsl_rma_sized", "Remote memory access, sized", None, [
        glsl_op("shmem_put{SIZE}", "void", _G_CONTIG, "vkshmem_put_(dest, source, " + _G_BYTES + ", pe)", ["sized"]),
        glsl_op("shmem_get{SIZE}", "void", _G_CONTIG, "vkshmem_get_(dest, source, " + _G_BYTES + ", pe)", ["sized"]),
        glsl_op("shmem_put{SIZE}_nbi", "void", _G_CONTIG, "vkshmem_put_(dest, source, " + _G_BYTES + ", pe)",
                ["sized"]),
        glsl_op("shmem_get{SIZE}_nbi", "void", _G_CONTIG, "vkshmem_get_(dest, source, " + _G_BYTES + ", pe)",
                ["sized"]),
        glsl_op("shmem_put{SIZE}_wg", "void", _G_CONTIG, "vkshmem_put_wg_(dest, source, " + _G_BYTES + ", pe)",
                ["sized"]),
        glsl_op("shmem_get{SIZE}_wg", "void", _G_CONTIG, "vkshmem_get_wg_(dest, source, " + _G_BYTES + ", pe)",
                ["sized"]),
    ]),
    family("glsl_signal", "Put with signal", None, [
        glsl_op("shmem_{TYPENAME}_put_signal", "void", _G_SIGNAL,
                "vkshmem_put_signal_(dest, source, " + _G_BYTES + ", sig_addr, signal, sig_op, pe)", _RMA),
        glsl_op("shmem_{TYPENAME}_put_signal_nbi", "void", _G_SIGNAL,
                "vkshmem_put_signal_(dest, source, " + _G_BYTES + ", sig_addr, signal, sig_op, pe)", _RMA),
        glsl_op("shmem_put{SIZE}_signal", "void", _G_SIGNAL,
                "vkshmem_put_signal_(dest, source, " + _G_BYTES + ", sig_addr, signal, sig_op, pe)", ["sized"]),
        glsl_op("shmem_put{SIZE}_signal_nbi", "void", _G_SIGNAL,
                "vkshmem_put_signal_(dest, source, " + _G_BYTES + ", sig_addr, signal, sig_op, pe)", ["sized"]),
    ]),
    family("glsl_amo", "Atomic memory operations", None, [
        glsl_op("shmem_{TYPENAME}_atomic_fetch", "{TYPE}", [("uint64_t", "source"), ("int", "pe")],
                _g_amo("FETCH", "true", target="source"), _EXT),
        glsl_op("shmem_{TYPENAME}_atomic_set", "void", _G_DEST_VALUE_PE, _g_amo("SET", "false", "{value_bits}"), _EXT),
        glsl_op("shmem_{TYPENAME}_atomic_swap", "{TYPE}", _G_DEST_VALUE_PE, _g_amo("SWAP", "true", "{value_bits}"),
                _EXT),
        glsl_op("shmem_{TYPENAME}_atomic_compare_swap", "{TYPE}",
                [("uint64_t", "dest"), ("{TYPE}", "cond"), ("{TYPE}", "value"), ("int", "pe")],
                _g_amo("COMPARE_SWAP", "true", "{value_bits}", "{cond_bits}"), _STD),
        glsl_op("shmem_{TYPENAME}_atomic_fetch_inc", "{TYPE}", _G_DEST_PE, _g_amo("ADD", "true", "{BITS}(1)"), _STD),
        glsl_op("shmem_{TYPENAME}_atomic_inc", "void", _G_DEST_PE, _g_amo("ADD", "false", "{BITS}(1)"), _STD),
        glsl_op("shmem_{TYPENAME}_atomic_fetch_add", "{TYPE}", _G_DEST_VALUE_PE, _g_amo("ADD", "true", "{value_bits}"),
                _STD),
        glsl_op("shmem_{TYPENAME}_atomic_add", "void", _G_DEST_VALUE_PE, _g_amo("ADD", "false", "{value_bits}"), _STD),
        glsl_op("shmem_{TYPENAME}_atomic_fetch_and", "{TYPE}", _G_DEST_VALUE_PE, _g_amo("AND", "true", "{value_bits}"),
                _BIT),
        glsl_op("shmem_{TYPENAME}_atomic_and", "void", _G_DEST_VALUE_PE, _g_amo("AND", "false", "{value_bits}"), _BIT),
        glsl_op("shmem_{TYPENAME}_atomic_fetch_or", "{TYPE}", _G_DEST_VALUE_PE, _g_amo("OR", "true", "{value_bits}"),
                _BIT),
        glsl_op("shmem_{TYPENAME}_atomic_or", "void", _G_DEST_VALUE_PE, _g_amo("OR", "false", "{value_bits}"), _BIT),
        glsl_op("shmem_{TYPENAME}_atomic_fetch_xor", "{TYPE}", _G_DEST_VALUE_PE, _g_amo("XOR", "true", "{value_bits}"),
                _BIT),
        glsl_op("shmem_{TYPENAME}_atomic_xor", "void", _G_DEST_VALUE_PE, _g_amo("XOR", "false", "{value_bits}"), _BIT),
    ]),
    family("glsl_p2p", "Point-to-point synchronization", None, [
        glsl_op("shmem_{TYPENAME}_wait_until", "void", _G_WAIT,
                "vkshmem_wait{W}_(ivar, cmp, {cmp_value_bits}, {SGN}, VKSHMEM_WAIT_ID_WAIT_UNTIL)", _P2P),
        glsl_op("shmem_{TYPENAME}_test", "int", _G_WAIT, "vkshmem_test{W}_(ivar, cmp, {cmp_value_bits}, {SGN})", _P2P),
    ]),
]

# {RCORE}: the double reductions have a core of their own (gen.py), so that only shaders that
# reduce doubles need shaderFloat64.
GLSL_FAMILIES += _coll_families("glsl", glsl_op, _G_BYTES, "{RCORE}")

# ---------------------------------------------------------------------------
# Queue-ordered reductions: vkshmemx_cmd_TYPENAME_OP_reduce (include/vkshmem/vulkan_reduce.h,
# src/api/generated/cmd_reduce.cpp), the device library's reductions recorded into a command
# buffer: each operation of the spec's reduction table, for the types the device library reduces
# (those with a GLSL value type).
# ---------------------------------------------------------------------------
CMD_REDUCE_OPS = [("and", "reduce_bitwise"), ("or", "reduce_bitwise"), ("xor", "reduce_bitwise"),
                  ("max", "reduce_minmax"), ("min", "reduce_minmax"), ("sum", "reduce_arith"),
                  ("prod", "reduce_arith")]
CMD_REDUCE_HEADER = "include/vkshmem/vulkan_reduce.h"
CMD_REDUCE_SOURCE = "src/api/generated/cmd_reduce.cpp"

# The generated GLSL file (included at the end of shaders/vkshmem.glsl).
GLSL_HEADER = "shaders/generated/vkshmem_typed.glsl"

# ---------------------------------------------------------------------------
# HLSL device library (shaders/generated/vkshmem_typed.hlsl)
# ---------------------------------------------------------------------------
# How a TYPENAME appears in HLSL compute shaders compiled by glslang. Its HLSL front end has
# uint64_t (converted by assignment only) but no int64_t, and its double cannot be split into
# words (no asuint(double, out, out)), so: signed 64-bit types pass their values as uint64_t bit
# patterns (wait_until/test still compare them signed), double gets only the bulk routines, and
# atomics exist for the 4-byte types only (no 64-bit Interlocked). Same keys as GLSL_TYPES.
_HL_I32 = _gl("int", 4, True, "asuint({})", "asint({})")
_HL_U32 = _gl("uint", 4)
_HL_I64 = _gl("uint64_t", 8, True)
_HL_U64 = _gl("uint64_t", 8)

HLSL_TYPES = {
    "float": _gl("float", 4, True, "asuint({})", "asfloat({})"),
    "double": _gl(None, 8),
    "char": _gl(None, 1),
    "schar": _gl(None, 1),
    "short": _gl(None, 2),
    "int": _HL_I32,
    "long": _HL_I64,
    "longlong": _HL_I64,
    "uchar": _gl(None, 1),
    "ushort": _gl(None, 2),
    "uint": _HL_U32,
    "ulong": _HL_U64,
    "ulonglong": _HL_U64,
    "int8": _gl(None, 1),
    "int16": _gl(None, 2),
    "int32": _HL_I32,
    "int64": _HL_I64,
    "uint8": _gl(None, 1),
    "uint16": _gl(None, 2),
    "uint32": _HL_U32,
    "uint64": _HL_U64,
    "size": _HL_U64,
    "ptrdiff": _HL_I64,
}


# An HLSL routine: as glsl_op; `widths`, when given, keeps only value types of those sizes.
def hlsl_op(name, ret, params, body, types, widths=None, values=False):
    return {"name": name, "ret": ret, "params": params, "body": body, "types": types, "widths": widths,
            "values": values}


_H_BYTES = "nelems * {BYTES}u"


def _h_amo(op, fetch, operand="0u", cond="0u", target="dest"):
    return f"vkshmem_amo32_({target}, VKSHMEM_AMO_{op}, {operand}, {cond}, pe, {fetch})"


_H_XFER = {
    "put": "vkshmem_put_(dest, source, " + _H_BYTES + ", pe)",
    "get": "vkshmem_get_(dest, source, " + _H_BYTES + ", pe)",
    "put_wg": "vkshmem_put_wg_(dest, source, " + _H_BYTES + ", pe)",
    "get_wg": "vkshmem_get_wg_(dest, source, " + _H_BYTES + ", pe)",
}
_H_SIG = "vkshmem_put_signal_(dest, source, " + _H_BYTES + ", sig_addr, signal, sig_op, pe)"
_A4 = (4,)


HLSL_FAMILIES = [
    family("hlsl_rma", "Remote memory access", None, [
        hlsl_op("shmem_{TYPENAME}_put", "void", _G_CONTIG, _H_XFER["put"], _RMA),
        hlsl_op("shmem_{TYPENAME}_get", "void", _G_CONTIG, _H_XFER["get"], _RMA),
        hlsl_op("shmem_{TYPENAME}_put_nbi", "void", _G_CONTIG, _H_XFER["put"], _RMA),
        hlsl_op("shmem_{TYPENAME}_get_nbi", "void", _G_CONTIG, _H_XFER["get"], _RMA),
        hlsl_op("shmem_{TYPENAME}_put_wg", "void", _G_CONTIG, _H_XFER["put_wg"], _RMA),
        hlsl_op("shmem_{TYPENAME}_get_wg", "void", _G_CONTIG, _H_XFER["get_wg"], _RMA),
        hlsl_op("shmem_{TYPENAME}_p", "void", _G_DEST_VALUE_PE, "vkshmem_p{W}_(dest, {value_bits}, pe)", _RMA),
        hlsl_op("shmem_{TYPENAME}_g", "{TYPE}", [("uint64_t", "source"), ("int", "pe")], "vkshmem_g{W}_(source, pe)",
                _RMA),
    ]),
    family("hlsl_rma_sized", "Remote memory access, sized", None, [
        hlsl_op("shmem_put{SIZE}", "void", _G_CONTIG, _H_XFER["put"], ["sized"]),
        hlsl_op("shmem_get{SIZE}", "void", _G_CONTIG, _H_XFER["get"], ["sized"]),
        hlsl_op("shmem_put{SIZE}_nbi", "void", _G_CONTIG, _H_XFER["put"], ["sized"]),
        hlsl_op("shmem_get{SIZE}_nbi", "void", _G_CONTIG, _H_XFER["get"], ["sized"]),
        hlsl_op("shmem_put{SIZE}_wg", "void", _G_CONTIG, _H_XFER["put_wg"], ["sized"]),
        hlsl_op("shmem_get{SIZE}_wg", "void", _G_CONTIG, _H_XFER["get_wg"], ["sized"]),
    ]),
    family("hlsl_signal", "Put with signal", None, [
        hlsl_op("shmem_{TYPENAME}_put_signal", "void", _G_SIGNAL, _H_SIG, _RMA),
        hlsl_op("shmem_{TYPENAME}_put_signal_nbi", "void", _G_SIGNAL, _H_SIG, _RMA),
        hlsl_op("shmem_put{SIZE}_signal", "void", _G_SIGNAL, _H_SIG, ["sized"]),
        hlsl_op("shmem_put{SIZE}_signal_nbi", "void", _G_SIGNAL, _H_SIG, ["sized"]),
    ]),
    family("hlsl_amo", "Atomic memory operations (4-byte types)", None, [
        hlsl_op("shmem_{TYPENAME}_atomic_fetch", "{TYPE}", [("uint64_t", "source"), ("int", "pe")],
                _h_amo("FETCH", "true", target="source"), _EXT, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_set", "void", _G_DEST_VALUE_PE, _h_amo("SET", "false", "{value_bits}"), _EXT,
                _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_swap", "{TYPE}", _G_DEST_VALUE_PE, _h_amo("SWAP", "true", "{value_bits}"),
                _EXT, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_compare_swap", "{TYPE}",
                [("uint64_t", "dest"), ("{TYPE}", "cond"), ("{TYPE}", "value"), ("int", "pe")],
                _h_amo("COMPARE_SWAP", "true", "{value_bits}", "{cond_bits}"), _STD, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_fetch_inc", "{TYPE}", _G_DEST_PE, _h_amo("ADD", "true", "1u"), _STD, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_inc", "void", _G_DEST_PE, _h_amo("ADD", "false", "1u"), _STD, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_fetch_add", "{TYPE}", _G_DEST_VALUE_PE, _h_amo("ADD", "true", "{value_bits}"),
                _STD, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_add", "void", _G_DEST_VALUE_PE, _h_amo("ADD", "false", "{value_bits}"), _STD,
                _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_fetch_and", "{TYPE}", _G_DEST_VALUE_PE, _h_amo("AND", "true", "{value_bits}"),
                _BIT, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_and", "void", _G_DEST_VALUE_PE, _h_amo("AND", "false", "{value_bits}"), _BIT,
                _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_fetch_or", "{TYPE}", _G_DEST_VALUE_PE, _h_amo("OR", "true", "{value_bits}"),
                _BIT, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_or", "void", _G_DEST_VALUE_PE, _h_amo("OR", "false", "{value_bits}"), _BIT,
                _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_fetch_xor", "{TYPE}", _G_DEST_VALUE_PE, _h_amo("XOR", "true", "{value_bits}"),
                _BIT, _A4),
        hlsl_op("shmem_{TYPENAME}_atomic_xor", "void", _G_DEST_VALUE_PE, _h_amo("XOR", "false", "{value_bits}"), _BIT,
                _A4),
    ]),
    family("hlsl_p2p", "Point-to-point synchronization", None, [
        hlsl_op("shmem_{TYPENAME}_wait_until", "void", _G_WAIT,
                "vkshmem_wait{W}_(ivar, cmp, {cmp_value_bits}, {SGN}, VKSHMEM_WAIT_ID_WAIT_UNTIL)", _P2P),
        hlsl_op("shmem_{TYPENAME}_test", "int", _G_WAIT, "vkshmem_test{W}_(ivar, cmp, {cmp_value_bits}, {SGN})", _P2P),
    ]),
]

# No double reductions in HLSL: glslang cannot split a double into words.
HLSL_FAMILIES += _coll_families("hlsl", hlsl_op, _H_BYTES, "vkshmem_reduce_")

# The generated HLSL file (included at the end of shaders/vkshmem.hlsl).
HLSL_HEADER = "shaders/generated/vkshmem_typed.hlsl"
