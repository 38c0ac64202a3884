// gpulab_count_ops: a GCC plugin that makes sim kernels count the arithmetic they execute.
//
// The sim compiles CUDA kernels with the host compiler, so a GPU's instructions do not exist on
// sim; the source's operations do. After GCC's optimizations (inlining, unrolling, constant
// folding: the operations that are left are those the code really executes), this pass classifies
// the operations of every basic block and inserts, at the block's start, for each class it
// executes
//
//     gpulab_sim_ops[class] += count;     // extern "C" thread_local uint64_t gpulab_sim_ops[8]
//
// (one instruction, no call). The sim runtime (framework/sim/src/counting.cpp) defines the array
// and moves its counts to the CUDA thread that ran whenever that thread stops running; what host
// code adds is dropped. docs/sim.md, "Counted instructions", says what each class holds and where
// it differs from a GPU's SASS.
//
// Classes: FP32 fused multiply-adds; other FP32 arithmetic and comparisons (add, subtract,
// multiply, minimum, maximum); FP64 arithmetic; integer and pointer arithmetic, logic, shifts and
// comparisons; special functions (exp, log, sin, cos, sqrt, reciprocal: the math library calls and
// the FP32 divisions); conversions between integer and floating-point or between floating-point
// widths; conditional branches. Vector operations count one per element. Loads and stores are
// not counted here (the sim's memory counting sees them), nor are moves, copies and address
// computations folded into a memory access.
//
// Operations whose source location is in a file under the `skip` argument (the sim's own headers:
// the software half-precision arithmetic, the built-in variables) are not counted: on a GPU they
// are single instructions or none. Math library calls are counted wherever they are.
//
// With the `memory` argument it also instruments every load and store of the same functions, in
// place of AddressSanitizer's checks (which the sim's counting used alone before):
//
//     __gpulab_sim_load(address, bytes);  __gpulab_sim_store(address, bytes);
//
// before each access, defined by the sim runtime. The top byte of `bytes` holds the base-2
// logarithm of the alignment the access needs (kAlignmentShift): its width, but no more than what
// GCC knows of the reference's alignment (its type's, or less where it proved less: a struct of
// floats copied as a whole needs 4, a float4 16), the rule a GPU faults on
// (cudaErrorMisalignedAddress). AddressSanitizer leaves out a check it finds
// redundant: the store of a read-modify-write (`a[i] += x`: its load was checked), a second load
// of an address checked before in the same block. Both are accesses a GPU executes, so a count
// must see each of them. Otherwise the accesses instrumented are those AddressSanitizer checks
// (with its stack and globals checks off, as the sim compiles): not an access that provably stays
// inside a thread-local, global or static variable or one of the function's locals (on a GPU
// those are registers or constants), but accesses through pointers, local arrays indexed at run
// time and arguments in memory; one exception: a __shared__ array (on sim a function's static
// thread_local) counts at every index, as shared memory does on a GPU (AddressSanitizer's rule
// missed `partial[0]`). Not instrumented either: built-in calls such as memcpy, and functions
// AddressSanitizer must leave alone (no_sanitize_address: the sim's atomics count themselves). The
// translation units are compiled with AddressSanitizer's own load and store checks off
// (`--param asan-instrument-reads=0 --param asan-instrument-writes=0`).
//
// Usage: -fplugin=PATH/gpulab_count_ops.so -fplugin-arg-gpulab_count_ops-skip=DIR
//        [-fplugin-arg-gpulab_count_ops-library=DIR/,DIR/...] (the compiler's own include folders)
//        [-fplugin-arg-gpulab_count_ops-memory] [-fplugin-arg-gpulab_count_ops-no-arithmetic]
// (no-arithmetic: accesses only, to measure what counting arithmetic costs)

// GCC's headers depend on their order: gcc-plugin.h first, the rest as GCC's own passes include
// them.
// clang-format off
#include <gcc-plugin.h>
#include <plugin-version.h>
#include <tree.h>
#include <tree-pass.h>
#include <context.h>
#include <function.h>
#include <basic-block.h>
#include <tree-ssa-alias.h>
#include <internal-fn.h>
#include <gimple-expr.h>
#include <is-a.h>
#include <gimple.h>
#include <gimple-iterator.h>
#include <ssa.h>
#include <tree-into-ssa.h>
#include <cfganal.h>
#include <builtins.h>
#include <diagnostic-core.h>
#include <stringpool.h>
#include <attribs.h>
#include <asan.h>
#include <gimplify.h>
#include <gimplify-me.h>
#include <stor-layout.h>
// clang-format on

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "op_classes.hpp"

int plugin_is_GPL_compatible;

namespace {

using namespace gpulab::sim;  // OpClass, kOpSlots (op_classes.hpp)

using Counts = BlockCounts;

std::string skip_prefix;  // source files under it are not counted

std::vector<std::string> library_prefixes;  // the host library's headers: the `library` argument

// Whether `loc` is in a header of the host's library: a file under one of the compiler's own
// include folders. (Not GCC's notion of a system header, which also holds the sim's launch.hpp
// where it reaches a file through the precompiled header; a kernel inlined into its launcher's
// lambda would then go uncounted.)
bool in_library(location_t loc) {
  const char* file = loc != UNKNOWN_LOCATION ? LOCATION_FILE(loc) : nullptr;
  if (file == nullptr) {
    return false;
  }
  for (const std::string& prefix : library_prefixes) {
    if (std::strncmp(file, prefix.c_str(), prefix.size()) == 0) {
      return true;
    }
  }
  return false;
}

// Whether `stmt` is an operation of the sim's own headers (a file under skip_prefix). Its location
// decides, unless it has none (the optimizer made it) or it is in the host's library (std::signbit
// inlined into the sim's FP16 conversion): then the function it was inlined from decides, or
// the one that function was inlined into, and so on out to the function being compiled, as the
// LLVM plugin's rule. (Before, an out-of-line copy of a sim header's function counted such
// operations, and which copy the linker kept, that one or an uncounted file's, changed with the
// build type.)
bool skipped(const gimple* stmt) {
  if (skip_prefix.empty()) {
    return false;
  }
  const auto decides = [](location_t l) { return l != UNKNOWN_LOCATION && !in_library(l); };
  location_t loc = gimple_location(stmt);
  for (tree block = gimple_block(stmt);
       !decides(loc) && block != NULL_TREE && TREE_CODE(block) == BLOCK;
       block = BLOCK_SUPERCONTEXT(block)) {
    const tree origin = block_ultimate_origin(block);
    if (origin != NULL_TREE && TREE_CODE(origin) == FUNCTION_DECL) {
      loc = DECL_SOURCE_LOCATION(origin);
    }
  }
  if (!decides(loc)) {
    loc = DECL_SOURCE_LOCATION(current_function_decl);
  }
  const char* file = LOCATION_FILE(loc);
  return file != nullptr && std::strncmp(file, skip_prefix.c_str(), skip_prefix.size()) == 0;
}

// Elements of a value of `type` (a vector's lanes, else 1) and the scalar type.
unsigned elements(tree& type) {
  if (TREE_CODE(type) == VECTOR_TYPE) {
    const poly_uint64 lanes = TYPE_VECTOR_SUBPARTS(type);
    type = TREE_TYPE(type);
    return lanes.is_constant() ? static_cast<unsigned>(lanes.to_constant()) : 1u;
  }
  return 1;
}

bool is_float(const_tree type, unsigned bits) {
  return SCALAR_FLOAT_TYPE_P(type) && TYPE_PRECISION(type) == bits;
}

bool is_integer(const_tree type) {
  return INTEGRAL_TYPE_P(type) || POINTER_TYPE_P(type);
}

// The name of the function `call` calls ("expf" for __builtin_expf too), or null.
const char* callee_name(const gcall* call) {
  const tree fndecl = gimple_call_fndecl(call);
  if (fndecl == NULL_TREE || DECL_NAME(fndecl) == NULL_TREE) {
    return nullptr;
  }
  const char* name = IDENTIFIER_POINTER(DECL_NAME(fndecl));
  return std::strncmp(name, "__builtin_", 10) == 0 ? name + 10 : name;
}

bool is_division(tree_code code) {
  switch (code) {
    case TRUNC_DIV_EXPR:
    case CEIL_DIV_EXPR:
    case FLOOR_DIV_EXPR:
    case ROUND_DIV_EXPR:
    case EXACT_DIV_EXPR:
    case TRUNC_MOD_EXPR:
    case CEIL_MOD_EXPR:
    case FLOOR_MOD_EXPR:
    case ROUND_MOD_EXPR:
      return true;
    default:
      return false;
  }
}

// An arithmetic operation `code` on values of `type` (for comparisons: the operands' type).
void count_arithmetic(tree_code code, tree type, Counts& c) {
  const unsigned n = elements(type);
  const bool fp32 = is_float(type, 32);
  const bool fp64 = is_float(type, 64);
  switch (code) {
    case PLUS_EXPR:
    case MINUS_EXPR:
    case MULT_EXPR:
    case MIN_EXPR:
    case MAX_EXPR:
    case LT_EXPR:
    case LE_EXPR:
    case GT_EXPR:
    case GE_EXPR:
    case EQ_EXPR:
    case NE_EXPR:
    case UNORDERED_EXPR:
    case ORDERED_EXPR:
    case UNLT_EXPR:
    case UNLE_EXPR:
    case UNGT_EXPR:
    case UNGE_EXPR:
    case UNEQ_EXPR:
    case LTGT_EXPR:
    case COND_EXPR:
      if (fp32) {
        c[kFp32Other] += n;
      } else if (fp64) {
        c[kFp64] += n;
      } else if (is_integer(type)) {
        c[kInteger] += n;
      }
      return;
    case RDIV_EXPR:
      // IEEE division: a reciprocal (special function unit) refined with FP32 fused multiply-adds.
      if (fp32) {
        c[kSpecial] += n;
        c[kFp32Fma] += 2 * n;
      } else if (fp64) {
        c[kFp64] += 4 * n;
      }
      return;
    case POINTER_PLUS_EXPR:
    case POINTER_DIFF_EXPR:
    case LSHIFT_EXPR:
    case RSHIFT_EXPR:
    case LROTATE_EXPR:
    case RROTATE_EXPR:
    case BIT_AND_EXPR:
    case BIT_IOR_EXPR:
    case BIT_XOR_EXPR:
    case BIT_NOT_EXPR:
    case MULT_HIGHPART_EXPR:
    case WIDEN_MULT_EXPR:
      if (is_integer(type)) {
        c[kInteger] += n;
      }
      return;
    default:
      // A division by a constant (nvcc multiplies by its inverse): one instruction. By a variable,
      // count_statement counts the sequence (count_integer_division).
      if (is_division(code) && is_integer(type)) {
        c[kInteger] += n;
      }
      return;
  }
}

// Integer arithmetic `code` on `type` that only addresses memory or controls a loop: in the
// address class, not the integer one.
void count_address(tree_code code, tree type, Counts& c) {
  Counts own{};
  count_arithmetic(code, type, own);
  c[kAddress] += own[kInteger];
}

// A conversion from `from` to `to`: int <-> float, or between floating-point widths.
void count_conversion(tree from, tree to, Counts& c) {
  const unsigned n = elements(to);
  elements(from);
  if (SCALAR_FLOAT_TYPE_P(from) != SCALAR_FLOAT_TYPE_P(to) ||
      (SCALAR_FLOAT_TYPE_P(from) && TYPE_PRECISION(from) != TYPE_PRECISION(to))) {
    c[kConversion] += n;
  }
}

void count_call(const gcall* call, bool arithmetic, Counts& c) {
  if (gimple_call_internal_p(call)) {
    const internal_fn fn = gimple_call_internal_fn(call);
    tree type = gimple_call_lhs(call) != NULL_TREE ? TREE_TYPE(gimple_call_lhs(call)) : NULL_TREE;
    if (type == NULL_TREE) {
      return;
    }
    const unsigned n = elements(type);
    if (fn == IFN_FMA || fn == IFN_FMS || fn == IFN_FNMA || fn == IFN_FNMS) {
      if (arithmetic && is_float(type, 32)) {
        c[kFp32Fma] += n;
      } else if (arithmetic && is_float(type, 64)) {
        c[kFp64] += n;
      }
    } else if (fn == IFN_SQRT || fn == IFN_RSQRT || fn == IFN_EXP || fn == IFN_EXP2 ||
               fn == IFN_LOG || fn == IFN_LOG2 || fn == IFN_SIN || fn == IFN_COS) {
      c[kSpecial] += n;
    } else if (arithmetic && (fn == IFN_FMIN || fn == IFN_FMAX) && is_float(type, 32)) {
      c[kFp32Other] += n;
    }
    return;
  }
  const char* name = callee_name(call);
  if (name == nullptr) {
    return;
  }
  if (is_special_function(name)) {
    c[kSpecial] += 1;
  } else if (arithmetic && (std::strcmp(name, "fmaf") == 0 || std::strcmp(name, "fma") == 0)) {
    c[std::strcmp(name, "fmaf") == 0 ? kFp32Fma : kFp64] += 1;
  } else if (arithmetic && (std::strcmp(name, "fminf") == 0 || std::strcmp(name, "fmaxf") == 0 ||
                            std::strcmp(name, "fabsf") == 0)) {
    c[kFp32Other] += 1;
  }
}

// Integer values computed only to address memory or to control a loop: an index scaled and added
// to a pointer, an induction variable and its exit test. nvcc folds most of them into its
// instructions' address offsets and unrolls loops of constant trip count; the host compiler keeps
// them as separate operations. They are not counted (their branches are).
hash_set<tree>* overhead = nullptr;

bool is_callback_named(const gimple* stmt, const char* prefix) {
  const gcall* call = dyn_cast<const gcall*>(stmt);
  const char* name = call != nullptr ? callee_name(call) : nullptr;
  return name != nullptr && std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

// Whether `stmt`'s block ends a loop's iteration: it has an edge back to the loop's start (the
// edges marked by mark_dfs_back_edges). Its branch is then the loop's exit test.
bool ends_iteration(const gimple* stmt) {
  edge e;
  edge_iterator ei;
  FOR_EACH_EDGE(e, ei, gimple_bb(stmt)->succs) {
    if ((e->flags & EDGE_DFS_BACK) != 0) {
      return true;
    }
  }
  return false;
}

// Whether `use`, a statement using the SSA name `name`, uses it only as an address or for loop
// control: a memory access's address, a loop's exit test, a PHI, the memory counting's
// callbacks, or another such value.
bool overhead_use(gimple* use, tree name) {
  if (is_gimple_debug(use) || is_a<gphi*>(use) || is_callback_named(use, "__asan_")) {
    return true;
  }
  if (is_a<gcond*>(use)) {
    return ends_iteration(use);
  }
  const gassign* assign = dyn_cast<gassign*>(use);
  if (assign == nullptr) {
    return false;
  }
  if (gimple_vuse(assign) != NULL_TREE) {  // a load or a store: unless it stores the value
    return !(gimple_store_p(assign) && gimple_assign_rhs1(assign) == name);
  }
  const tree lhs = gimple_assign_lhs(assign);
  return TREE_CODE(lhs) == SSA_NAME && overhead->contains(lhs);
}

// Fills `overhead` for `fun`: every integer or pointer value is a candidate; a value with a use
// that is not overhead_use is not (repeated until nothing changes).
void find_overhead(function* fun) {
  auto_vec<tree> candidates;
  basic_block bb;
  FOR_EACH_BB_FN(bb, fun) {
    for (gphi_iterator gsi = gsi_start_phis(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
      const tree lhs = gimple_phi_result(gsi.phi());
      if (is_integer(TREE_TYPE(lhs)) && !virtual_operand_p(lhs)) {
        candidates.safe_push(lhs);
      }
    }
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
      const gassign* assign = dyn_cast<gassign*>(gsi_stmt(gsi));
      if (assign != nullptr && gimple_vuse(assign) == NULL_TREE &&
          TREE_CODE(gimple_assign_lhs(assign)) == SSA_NAME &&
          is_integer(TREE_TYPE(gimple_assign_lhs(assign)))) {
        candidates.safe_push(gimple_assign_lhs(assign));
      }
    }
  }
  for (const tree name : candidates) {
    overhead->add(name);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const tree name : candidates) {
      if (!overhead->contains(name)) {
        continue;
      }
      imm_use_iterator it;
      use_operand_p use;
      FOR_EACH_IMM_USE_FAST(use, it, name) {
        if (!overhead_use(USE_STMT(use), name)) {
          overhead->remove(name);
          changed = true;
          break;
        }
      }
    }
  }
}

// Whether `operand` is an overhead value (a loop's induction variable, say).
bool is_overhead_operand(tree operand) {
  return TREE_CODE(operand) == SSA_NAME && overhead->contains(operand);
}

// nvcc contracts a floating-point multiply whose product feeds an add or subtract into one fused
// multiply-add (-fmad=true, its default); the host compiler without FMA instructions keeps two.
// The additions such a multiply feeds: counted with the multiply, as one FMA.
hash_set<gimple*>* contracted = nullptr;

// Whether `assign` is a multiply of floating-point values whose only use is an add or subtract;
// that add is then recorded in `contracted`.
bool contracts(const gassign* assign) {
  if (gimple_assign_rhs_code(assign) != MULT_EXPR) {
    return false;
  }
  const tree lhs = gimple_assign_lhs(assign);
  tree type = TREE_TYPE(lhs);
  elements(type);
  if (!SCALAR_FLOAT_TYPE_P(type) || TREE_CODE(lhs) != SSA_NAME) {
    return false;
  }
  use_operand_p use;
  gimple* user = nullptr;
  if (!single_imm_use(lhs, &use, &user)) {
    return false;
  }
  const gassign* add = dyn_cast<gassign*>(user);
  if (add == nullptr ||
      (gimple_assign_rhs_code(add) != PLUS_EXPR && gimple_assign_rhs_code(add) != MINUS_EXPR)) {
    return false;
  }
  contracted->add(user);
  return true;
}

void count_statement(gimple* stmt, Counts& c) {
  const bool arithmetic = !skipped(stmt);
  if (const gcall* call = dyn_cast<gcall*>(stmt)) {
    count_call(call, arithmetic, c);
    return;
  }
  if (!arithmetic) {
    return;
  }
  if (const gcond* cond = dyn_cast<gcond*>(stmt)) {
    // A loop's exit test on its induction variable is loop control.
    const bool loop_control = ends_iteration(cond) && (is_overhead_operand(gimple_cond_lhs(cond)) ||
                                                       is_overhead_operand(gimple_cond_rhs(cond)));
    (loop_control ? count_address : count_arithmetic)(gimple_cond_code(cond),
                                                      TREE_TYPE(gimple_cond_lhs(cond)), c);
    c[kBranch] += 1;
    return;
  }
  if (is_a<gswitch*>(stmt)) {
    c[kBranch] += 1;
    return;
  }
  const gassign* assign = dyn_cast<gassign*>(stmt);
  if (assign == nullptr) {
    return;
  }
  const tree_code code = gimple_assign_rhs_code(assign);
  const tree lhs = gimple_assign_lhs(assign);
  if (contracted->contains(stmt)) {
    return;  // counted with its multiply
  }
  if (TREE_CODE(lhs) == SSA_NAME && overhead->contains(lhs)) {
    count_address(code, TREE_TYPE(lhs), c);
    return;
  }
  if (contracts(assign)) {
    tree type = TREE_TYPE(lhs);
    const unsigned n = elements(type);
    c[is_float(type, 32) ? kFp32Fma : is_float(type, 64) ? kFp64 : kFp32Other] += n;
    return;
  }
  if (code == FLOAT_EXPR || code == FIX_TRUNC_EXPR || CONVERT_EXPR_CODE_P(code)) {
    count_conversion(TREE_TYPE(gimple_assign_rhs1(assign)), TREE_TYPE(lhs), c);
    return;
  }
  if (TREE_CODE_CLASS(code) == tcc_comparison) {
    count_arithmetic(code, TREE_TYPE(gimple_assign_rhs1(assign)), c);
    return;
  }
  if (is_division(code) && is_integer(TREE_TYPE(lhs)) &&
      TREE_CODE(gimple_assign_rhs2(assign)) != INTEGER_CST) {
    tree type = TREE_TYPE(lhs);
    count_integer_division(elements(type), c);
    return;
  }
  count_arithmetic(code, TREE_TYPE(lhs), c);
}

// The running CUDA thread's counts: `extern "C" thread_local uint64_t gpulab_sim_ops[kOpSlots]`,
// one field per OpClass (op_classes.hpp), defined by the sim runtime
// (framework/sim/src/counting.cpp), which moves them to the thread it belongs to whenever a CUDA
// thread stops running.
tree ops_decl = NULL_TREE;

tree ops_array() {
  if (ops_decl == NULL_TREE) {
    const tree type = build_array_type_nelts(long_long_unsigned_type_node, kOpSlots);
    ops_decl = build_decl(UNKNOWN_LOCATION, VAR_DECL, get_identifier("gpulab_sim_ops"), type);
    TREE_PUBLIC(ops_decl) = 1;
    DECL_EXTERNAL(ops_decl) = 1;
    TREE_STATIC(ops_decl) = 1;
    DECL_ARTIFICIAL(ops_decl) = 1;
    DECL_IGNORED_P(ops_decl) = 1;
    TREE_USED(ops_decl) = 1;
    TREE_ADDRESSABLE(ops_decl) = 1;
    set_decl_tls_model(ops_decl, TLS_MODEL_INITIAL_EXEC);
  }
  return ops_decl;
}

// Inserts `gpulab_sim_ops[field] += count` before `at`.
void insert_increment(gimple_stmt_iterator* at, unsigned field, unsigned count, bool ssa) {
  const tree type = long_long_unsigned_type_node;
  const auto element = [&] {  // a tree for each use: GIMPLE shares no reference
    return build4(ARRAY_REF, type, ops_array(), build_int_cst(integer_type_node, field), NULL_TREE,
                  NULL_TREE);
  };
  const tree before = ssa ? make_ssa_name(type) : create_tmp_var(type);
  const tree after = ssa ? make_ssa_name(type) : create_tmp_var(type);
  gsi_insert_before(at, gimple_build_assign(before, element()), GSI_SAME_STMT);
  gsi_insert_before(at, gimple_build_assign(after, PLUS_EXPR, before, build_int_cst(type, count)),
                    GSI_SAME_STMT);
  gsi_insert_before(at, gimple_build_assign(element(), after), GSI_SAME_STMT);
}

bool instrument_memory = false;    // the `memory` argument
bool count_arithmetic_ops = true;  // not the `no-arithmetic` argument

// __gpulab_sim_load or __gpulab_sim_store: void (const void* address, size_t bytes).
tree access_function(bool store) {
  static tree decls[2] = {NULL_TREE, NULL_TREE};
  tree& decl = decls[store ? 1 : 0];
  if (decl == NULL_TREE) {
    const tree type =
        build_function_type_list(void_type_node, const_ptr_type_node, size_type_node, NULL_TREE);
    decl = build_fn_decl(store ? "__gpulab_sim_store" : "__gpulab_sim_load", type);
    TREE_NOTHROW(decl) = 1;
  }
  return decl;
}

// Whether `inner` is the value the function returns, in its return slot (the caller's: a struct
// a GPU builds in registers once the call is inlined).
bool returned_value(tree inner) {
  if (TREE_CODE(inner) == RESULT_DECL) {
    return true;
  }
  if (TREE_CODE(inner) != MEM_REF) {
    return false;
  }
  const tree pointer = TREE_OPERAND(inner, 0);
  return TREE_CODE(pointer) == SSA_NAME && SSA_NAME_VAR(pointer) != NULL_TREE &&
         TREE_CODE(SSA_NAME_VAR(pointer)) == RESULT_DECL;
}

// The reference an access to `ref` is counted as (a bit-field: the bytes that hold it), or
// NULL_TREE when it is not counted (see the file's comment).
tree counted_reference(tree ref) {
  if (TREE_CODE(ref) == BIT_FIELD_REF || TREE_CODE(ref) == REALPART_EXPR ||
      TREE_CODE(ref) == IMAGPART_EXPR) {
    return NULL_TREE;
  }
  if (TREE_CODE(ref) == COMPONENT_REF && DECL_BIT_FIELD(TREE_OPERAND(ref, 1))) {
    const tree representative = DECL_BIT_FIELD_REPRESENTATIVE(TREE_OPERAND(ref, 1));
    if (representative == NULL_TREE) {
      return NULL_TREE;
    }
    ref = build3(COMPONENT_REF, TREE_TYPE(representative), TREE_OPERAND(ref, 0), representative,
                 TREE_OPERAND(ref, 2));
  }
  if (int_size_in_bytes(TREE_TYPE(ref)) <= 0) {
    return NULL_TREE;
  }
  poly_int64 bit_size;
  poly_int64 bit_position;
  tree offset;
  machine_mode mode;
  int unsigned_p;
  int reverse_p;
  int volatile_p = 0;
  const tree inner = get_inner_reference(ref, &bit_size, &bit_position, &offset, &mode, &unsigned_p,
                                         &reverse_p, &volatile_p);
  if (inner == ops_decl || (VAR_P(inner) && DECL_HARD_REGISTER(inner)) ||
      !ADDR_SPACE_GENERIC_P(TYPE_ADDR_SPACE(TREE_TYPE(inner))) || returned_value(inner)) {
    return NULL_TREE;
  }
  poly_int64 decl_size;
  if (VAR_P(inner) && offset == NULL_TREE && DECL_SIZE(inner) != NULL_TREE &&
      poly_int_tree_p(DECL_SIZE(inner), &decl_size) &&
      known_subrange_p(bit_position, bit_size, 0, decl_size)) {
    // Provably inside one variable: a thread-local, global or static one, or one of this
    // function's locals; but a __shared__ array (a function's static thread_local on sim:
    // framework/sim/include/gpulab/sim/device.hpp) is shared memory, read at an index known at
    // compile time or not.
    const bool shared_array = DECL_THREAD_LOCAL_P(inner) && decl_function_context(inner) != NULL;
    if (!shared_array &&
        (is_global_var(inner) || decl_function_context(inner) == current_function_decl)) {
      return NULL_TREE;
    }
  }
  return ref;
}

unsigned accesses_inserted = 0;  // calls inserted, over the compilation

// Inserts `function(address, bytes)` before `at`, with the location of the statement there.
void insert_count(gimple_stmt_iterator* at, bool store, tree address, tree bytes) {
  gcall* call = gimple_build_call(access_function(store), 2, address, bytes);
  gimple_set_location(call, gimple_location(gsi_stmt(*at)));
  gsi_insert_before(at, call, GSI_SAME_STMT);
  ++accesses_inserted;
}

// Inserts the count of an access to `ref` before `at`.
void insert_access(gimple_stmt_iterator* at, tree ref, bool store) {
  ref = counted_reference(ref);
  if (ref == NULL_TREE) {
    return;
  }
  if (const tree base = get_base_address(ref); base != NULL_TREE && DECL_P(base)) {
    mark_addressable(base);
  }
  const tree address = force_gimple_operand_gsi(at, build_fold_addr_expr(unshare_expr(ref)), true,
                                                NULL_TREE, true, GSI_SAME_STMT);
  const auto bytes = static_cast<std::uint64_t>(int_size_in_bytes(TREE_TYPE(ref)));
  // The alignment the access needs: the largest power of 2 dividing its width, at most what GCC
  // knows of the reference's alignment.
  const std::uint64_t known = get_object_alignment(ref) / BITS_PER_UNIT;
  std::uint64_t alignment = bytes & (~bytes + 1);
  alignment = std::min<std::uint64_t>(alignment, std::max<std::uint64_t>(known, 1));
  const std::uint64_t shift = static_cast<std::uint64_t>(__builtin_ctzll(alignment));
  insert_count(at, store, address, build_int_cst(size_type_node, bytes | shift << kAlignmentShift));
}

// A memory operand: neither a register nor a constant.
bool in_memory(tree operand) {
  return !is_gimple_reg(operand) && !is_gimple_min_invariant(operand) &&
         TREE_CODE(operand) != ADDR_EXPR && TREE_CODE(operand) != CONSTRUCTOR &&
         TREE_CODE(operand) != SSA_NAME;
}

// Instruments the accesses `stmt` (at `at`) makes: an assignment's load and store, a call's
// arguments passed in memory and the value it returns into memory.
void instrument_statement(gimple_stmt_iterator* at) {
  gimple* stmt = gsi_stmt(*at);
  if (gimple_clobber_p(stmt) || is_gimple_debug(stmt)) {
    return;
  }
  if (is_gimple_assign(stmt)) {
    if (gimple_assign_load_p(stmt)) {
      insert_access(at, gimple_assign_rhs1(stmt), false);
    }
    if (gimple_store_p(stmt)) {
      insert_access(at, gimple_assign_lhs(stmt), true);
    }
  } else if (gcall* call = dyn_cast<gcall*>(stmt)) {
    if (gimple_call_builtin_p(call, BUILT_IN_NORMAL)) {
      return;  // memcpy and the like, as AddressSanitizer's kernel checks: not counted
    }
    for (unsigned i = 0; i < gimple_call_num_args(call); ++i) {
      if (in_memory(gimple_call_arg(call, i))) {
        insert_access(at, gimple_call_arg(call, i), false);
      }
    }
    const tree lhs = gimple_call_lhs(call);
    if (lhs != NULL_TREE && gimple_store_p(call) &&
        !aggregate_value_p(lhs, gimple_call_fntype(call))) {
      insert_access(at, lhs, true);
    }
  }
}

// Every access of the function, unless AddressSanitizer must leave it alone.
bool instrument_accesses(function* fun) {
  if (!sanitize_flags_p(SANITIZE_ADDRESS, fun->decl)) {  // what no_sanitize_address turns off
    return false;
  }
  const unsigned before = accesses_inserted;
  basic_block bb;
  FOR_EACH_BB_FN(bb, fun) {
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
      instrument_statement(&gsi);  // inserts before gsi's statement: gsi stays on it
    }
  }
  return accesses_inserted != before;
}

const pass_data kPassData = {GIMPLE_PASS,
                             "gpulab_count_ops",
                             OPTGROUP_NONE,
                             TV_NONE,
                             PROP_cfg | PROP_gimple_any,
                             0,
                             0,
                             0,
                             0};

// Counts the arithmetic of every basic block of `fun` (an increment at each block's start).
// Whether it inserted any.
bool count_blocks(function* fun) {
  bool inserted = false;
  hash_set<gimple*> contracted_adds;
  contracted = &contracted_adds;
  hash_set<tree> overhead_values;
  overhead = &overhead_values;
  mark_dfs_back_edges(fun);
  find_overhead(fun);
  basic_block bb;
  FOR_EACH_BB_FN(bb, fun) {
    Counts c{};
    for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
      count_statement(gsi_stmt(gsi), c);
    }
    gimple_stmt_iterator at = gsi_after_labels(bb);
    for (unsigned f = 0; f < kOpClasses; ++f) {
      if (c[f] != 0) {
        insert_increment(&at, f, c[f], gimple_in_ssa_p(fun));
        inserted = true;
      }
    }
  }
  contracted = nullptr;
  overhead = nullptr;
  return inserted;
}

struct CountOpsPass : gimple_opt_pass {
  explicit CountOpsPass(gcc::context* ctx) : gimple_opt_pass(kPassData, ctx) {}
  unsigned int execute(function* fun) override {
    // A function of the host's library compiled out of line here (std::string's members,
    // std::to_string: the launchers' error messages) is not the kernels' (CUDA code cannot call
    // one), and the sim runtime's files have uncounted copies of it: which copy the linker keeps
    // must not change a count (the runtime calls them from CUDA threads where it is not inlined, as
    // at -O0). Library code inlined into a kernel is the kernel's, and counted.
    if (in_library(DECL_SOURCE_LOCATION(fun->decl))) {
      return 0;
    }
    bool inserted = count_arithmetic_ops && count_blocks(fun);
    if (instrument_memory && instrument_accesses(fun)) {
      inserted = true;
    }
    if (inserted && gimple_in_ssa_p(fun)) {
      mark_virtual_operands_for_renaming(fun);
      return TODO_update_ssa_only_virtuals;
    }
    return 0;
  }
};

}  // namespace

int plugin_init(struct plugin_name_args* info, struct plugin_gcc_version* version) {
  if (!plugin_default_version_check(version, &gcc_version)) {
    error("%qs: built for GCC %s, loaded by another GCC version; rebuild gpulab",
          "gpulab_count_ops", gcc_version.basever);
    return 1;
  }
  for (int i = 0; i < info->argc; ++i) {
    if (std::strcmp(info->argv[i].key, "skip") == 0 && info->argv[i].value != nullptr) {
      skip_prefix = info->argv[i].value;
    } else if (std::strcmp(info->argv[i].key, "library") == 0 && info->argv[i].value != nullptr) {
      const std::string folders = info->argv[i].value;  // comma-separated, each ending in '/'
      for (std::size_t at = 0; at < folders.size();) {
        const std::size_t end = std::min(folders.find(',', at), folders.size());
        if (end > at) {
          library_prefixes.push_back(folders.substr(at, end - at));
        }
        at = end + 1;
      }
    } else if (std::strcmp(info->argv[i].key, "memory") == 0) {
      instrument_memory = true;
    } else if (std::strcmp(info->argv[i].key, "no-arithmetic") == 0) {
      count_arithmetic_ops = false;
    } else {
      error("%qs: unknown argument %qs", "gpulab_count_ops", info->argv[i].key);
      return 1;
    }
  }
  // After the last GIMPLE optimization ("optimized"), so that what is counted is what the code
  // executes once inlined, unrolled and simplified.
  struct register_pass_info pass;
  pass.pass = new CountOpsPass(g);
  pass.reference_pass_name = "optimized";
  pass.ref_pass_instance_number = 1;
  pass.pos_op = PASS_POS_INSERT_AFTER;
  register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, nullptr, &pass);
  return 0;
}
