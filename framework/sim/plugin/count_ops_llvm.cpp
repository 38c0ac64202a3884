// gpulab_count_ops for clang: an LLVM pass plugin that makes sim kernels count the arithmetic they
// execute and every load and store they make, as the GCC plugin (count_ops.cpp) does under GCC.
// That file's comment gives the rules; this one says where LLVM's IR makes them differ.
//
// It runs at the end of the optimization pipeline (the optimizer's last extension point, at every
// optimization level), so what is counted is what the code executes once inlined, unrolled and
// simplified. For each basic block it adds, at the block's start, for each class (op_classes.hpp)
//
//     gpulab_sim_ops[class] += count;     // extern "C" thread_local uint64_t gpulab_sim_ops[8]
//
// and before each load and store of memory that is not provably inside one variable (a
// thread-local, global or static one, or one of the function's locals; a __shared__ array, a
// function-local static thread_local on sim, counts at every index)
//
//     __gpulab_sim_load(address, bytes);  __gpulab_sim_store(address, bytes);
//
// Where LLVM's IR differs from GCC's GIMPLE at the same point:
// - An address is a getelementptr: it counts one operation per index the compiler does not know
//   (a GPU's scaled add), none for constant offsets (folded into the access); GCC's GIMPLE spells
//   the scaling and the add as two operations, or none once its loop optimizer has rewritten them.
// - A comparison and its branch are two instructions (GCC: one condition); together they count the
//   same.
// - Atomic loads and stores, like GCC's atomic built-ins, are not counted here (the sim's atomics
//   count themselves).
// - Functions marked `disable_sanitizer_instrumentation` (GPULAB_SIM_UNCOUNTED in the sim's
//   headers; GCC's plugin reads no_sanitize_address) make no access calls.
// - Which file an operation comes from (the `skip` rule) needs line tables: the build compiles
//   counted files with at least -gline-tables-only.
//
// Usage: -fplugin=PATH/gpulab_count_ops_llvm.so -fpass-plugin=PATH/gpulab_count_ops_llvm.so
//        -mllvm -gpulab-count-skip=DIR -mllvm -gpulab-count-library=DIR,DIR...
//        [-mllvm -gpulab-count-arithmetic=false]
// (-fplugin loads it before clang reads -mllvm, which then knows its option.)

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>

#include <array>
#include <bit>
#include <cstring>
#include <string>

#include "op_classes.hpp"

namespace {

using namespace llvm;
using namespace gpulab::sim;  // OpClass, kOpSlots (op_classes.hpp)

using Counts = BlockCounts;

cl::opt<std::string> skip_prefix("gpulab-count-skip",
                                 cl::desc("gpulab_count_ops: source files under this directory "
                                          "count no arithmetic"),
                                 cl::init(""));
cl::opt<bool> count_arithmetic_ops("gpulab-count-arithmetic",
                                   cl::desc("gpulab_count_ops: count arithmetic (false: accesses "
                                            "only, to measure what counting arithmetic costs)"),
                                   cl::init(true));

cl::list<std::string> library_prefixes(
    "gpulab-count-library", cl::CommaSeparated,
    cl::desc("gpulab_count_ops: the host's library headers (an operation inlined from one is its "
             "caller's; a function of one compiled out of line is not counted)"));

// The file of `scope`, without . and .. in it.
SmallString<256> file_of(const DIScope* scope) {
  SmallString<256> file(scope->getFilename());
  if (!sys::path::is_absolute(file)) {
    file = scope->getDirectory();
    sys::path::append(file, scope->getFilename());
  }
  sys::path::remove_dots(file, true);
  return file;
}

bool in_library(StringRef file) {
  for (const std::string& prefix : library_prefixes) {
    if (file.starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

// Whether `inst` is an operation of the sim's own headers (a file under skip_prefix). Its location
// decides, or, for code inlined from the host's library headers (std::isnan in the sim's FP16
// conversion), its caller's: GCC folds such calls at the caller's location.
bool skipped(const Instruction& inst) {
  if (skip_prefix.empty()) {
    return false;
  }
  for (const DILocation* loc = inst.getDebugLoc().get(); loc != nullptr;
       loc = loc->getInlinedAt()) {
    const SmallString<256> file = file_of(loc->getScope());
    if (!in_library(file)) {
      return file.str().starts_with(skip_prefix);
    }
  }
  // No location, or only the library's: the function's own file.
  const DISubprogram* function = inst.getFunction()->getSubprogram();
  return function != nullptr && file_of(function).str().starts_with(skip_prefix);
}

// Elements of a value of `type` (a vector's lanes, else 1); `type` becomes the scalar type.
unsigned elements(Type*& type) {
  if (auto* vector = dyn_cast<FixedVectorType>(type)) {
    type = vector->getElementType();
    return vector->getNumElements();
  }
  type = type->getScalarType();
  return 1;
}

bool is_integer(const Type* type) {
  return type->getScalarType()->isIntegerTy() || type->getScalarType()->isPointerTy();
}

// The class of a floating-point or integer operation on values of scalar type `type`, or
// kOpClasses for none.
unsigned arithmetic_class(const Type* type) {
  if (type->isFloatTy()) {
    return kFp32Other;
  }
  if (type->isDoubleTy()) {
    return kFp64;
  }
  return is_integer(type) ? kInteger : kOpClasses;
}

void add(Counts& c, unsigned cls, unsigned n) {
  if (cls < kOpClasses) {
    c[cls] += n;
  }
}

void count_call(const CallBase& call, bool arithmetic, Counts& c) {
  const Function* callee = call.getCalledFunction();
  if (callee == nullptr) {
    return;
  }
  Type* type = call.getType();
  const unsigned n = elements(type);
  if (callee->isIntrinsic()) {
    switch (callee->getIntrinsicID()) {
      case Intrinsic::fma:
      case Intrinsic::fmuladd:
        if (arithmetic) {
          add(c, type->isFloatTy() ? kFp32Fma : type->isDoubleTy() ? kFp64 : kOpClasses, n);
        }
        return;
      case Intrinsic::sqrt:
      case Intrinsic::exp:
      case Intrinsic::exp2:
      case Intrinsic::exp10:
      case Intrinsic::log:
      case Intrinsic::log2:
      case Intrinsic::log10:
      case Intrinsic::sin:
      case Intrinsic::cos:
      case Intrinsic::pow:
        c[kSpecial] += n;
        return;
      case Intrinsic::minnum:
      case Intrinsic::maxnum:
      case Intrinsic::minimum:
      case Intrinsic::maximum:
        if (arithmetic && type->isFloatTy()) {
          c[kFp32Other] += n;
        }
        return;
      case Intrinsic::smin:
      case Intrinsic::smax:
      case Intrinsic::umin:
      case Intrinsic::umax:
        if (arithmetic) {
          c[kInteger] += n;
        }
        return;
      default:
        return;
    }
  }
  const StringRef name = callee->getName();
  if (is_special_function(name)) {
    c[kSpecial] += 1;
  } else if (arithmetic && (name == "fmaf" || name == "fma")) {
    c[name == "fmaf" ? kFp32Fma : kFp64] += 1;
  } else if (arithmetic && (name == "fminf" || name == "fmaxf" || name == "fabsf")) {
    c[kFp32Other] += 1;
  }
}

// The analysis of one function: its loops' back edges, the values that only address memory or
// control a loop, and the additions contracted into a multiply.
class FunctionCounter {
 public:
  explicit FunctionCounter(Function& f) : f_(f) {
    SmallVector<std::pair<const BasicBlock*, const BasicBlock*>> back_edges;
    FindFunctionBackedges(f, back_edges);
    for (const auto& [from, to] : back_edges) {
      ends_iteration_.insert(from);
    }
    find_overhead();
  }

  Counts count(BasicBlock& bb) {
    Counts c{};
    for (Instruction& inst : bb) {
      count_instruction(inst, c);
    }
    return c;
  }

 private:
  // Whether `bb` ends a loop's iteration: its branch is then the loop's exit test.
  bool ends_iteration(const BasicBlock* bb) const { return ends_iteration_.contains(bb); }

  static bool is_candidate(const Instruction& inst) {
    return is_integer(inst.getType()) &&
           (isa<PHINode>(inst) || isa<BinaryOperator>(inst) || isa<CastInst>(inst) ||
            isa<GetElementPtrInst>(inst) || isa<SelectInst>(inst) || isa<ICmpInst>(inst));
  }

  // Whether `user` uses `value` only as an address or for loop control (count_ops.cpp's
  // overhead_use).
  bool overhead_use(const User* user, const Value* value) const {
    if (isa<PHINode>(user)) {
      return true;
    }
    if (const auto* load = dyn_cast<LoadInst>(user)) {
      return load->getPointerOperand() == value;
    }
    if (const auto* store = dyn_cast<StoreInst>(user)) {
      return store->getValueOperand() != value;
    }
    if (const auto* branch = dyn_cast<BranchInst>(user)) {
      return ends_iteration(branch->getParent());
    }
    const auto* inst = dyn_cast<Instruction>(user);
    return inst != nullptr && overhead_.contains(inst);
  }

  void find_overhead() {
    SmallVector<const Instruction*> candidates;
    for (const Instruction& inst : instructions(f_)) {
      if (is_candidate(inst)) {
        candidates.push_back(&inst);
        overhead_.insert(&inst);
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const Instruction* inst : candidates) {
        if (!overhead_.contains(inst)) {
          continue;
        }
        for (const User* user : inst->users()) {
          if (!overhead_use(user, inst)) {
            overhead_.erase(inst);
            changed = true;
            break;
          }
        }
      }
    }
  }

  bool is_overhead_operand(const Value* v) const {
    const auto* inst = dyn_cast<Instruction>(v);
    return inst != nullptr && overhead_.contains(inst);
  }

  // Whether `inst` is a floating-point multiply whose only use is an add or subtract (nvcc
  // contracts the two into one fused multiply-add); that add is then recorded in contracted_.
  bool contracts(const Instruction& inst) {
    if (inst.getOpcode() != Instruction::FMul || !inst.hasOneUse()) {
      return false;
    }
    const auto* user = dyn_cast<Instruction>(*inst.user_begin());
    if (user == nullptr ||
        (user->getOpcode() != Instruction::FAdd && user->getOpcode() != Instruction::FSub)) {
      return false;
    }
    contracted_.insert(user);
    return true;
  }

  // Operations of an address: one per index the compiler does not know.
  static unsigned address_operations(const GetElementPtrInst& gep) {
    unsigned n = 0;
    for (const Use& index : gep.indices()) {
      n += isa<Constant>(index) ? 0 : 1;
    }
    return n;
  }

  // Of a vector operation's `n` lanes, those a GPU thread computes: when only some lanes are
  // taken out of the result (the optimizer made a vector of scalar code), those.
  static unsigned lanes_used(const Instruction& inst, unsigned n) {
    if (n == 1 || inst.use_empty()) {
      return n;
    }
    uint64_t lanes = 0;  // a bit per lane
    for (const User* user : inst.users()) {
      const auto* extract = dyn_cast<ExtractElementInst>(user);
      const auto* index =
          extract != nullptr ? dyn_cast<ConstantInt>(extract->getIndexOperand()) : nullptr;
      if (index == nullptr || index->getZExtValue() >= 64) {
        return n;
      }
      lanes |= uint64_t{1} << index->getZExtValue();
    }
    return static_cast<unsigned>(std::popcount(lanes));
  }

  void count_instruction(Instruction& inst, Counts& c) {
    const bool arithmetic = !skipped(inst);
    if (const auto* call = dyn_cast<CallBase>(&inst)) {
      count_call(*call, arithmetic, c);
      return;
    }
    if (!arithmetic) {
      return;
    }
    if (const auto* branch = dyn_cast<BranchInst>(&inst)) {
      c[kBranch] += branch->isConditional() ? 1 : 0;
      return;
    }
    if (isa<SwitchInst>(inst)) {
      c[kBranch] += 1;
      return;
    }
    if (contracted_.contains(&inst)) {
      return;  // counted with its multiply
    }
    Type* type = inst.getType();
    unsigned n = lanes_used(inst, elements(type));
    if (const auto* gep = dyn_cast<GetElementPtrInst>(&inst)) {
      c[overhead_.contains(&inst) ? kAddress : kInteger] += n * address_operations(*gep);
      return;
    }
    if (const auto* compare = dyn_cast<CmpInst>(&inst)) {
      Type* operands = compare->getOperand(0)->getType();
      n = elements(operands);
      // A loop's exit test on its induction variable is loop control.
      const bool loop_control =
          overhead_.contains(&inst) && (is_overhead_operand(compare->getOperand(0)) ||
                                        is_overhead_operand(compare->getOperand(1)));
      add(c, loop_control ? kAddress : arithmetic_class(operands), n);
      return;
    }
    if (overhead_.contains(&inst)) {
      if (isa<BinaryOperator>(inst) || isa<SelectInst>(inst)) {
        c[kAddress] += n;
      }
      return;
    }
    if (contracts(inst)) {
      add(c, type->isFloatTy() ? kFp32Fma : type->isDoubleTy() ? kFp64 : kFp32Other, n);
      return;
    }
    if (isa<CastInst>(inst)) {
      // int <-> float and between floating-point widths; not a bit cast or an integer's width.
      switch (inst.getOpcode()) {
        case Instruction::SIToFP:
        case Instruction::UIToFP:
        case Instruction::FPToSI:
        case Instruction::FPToUI:
        case Instruction::FPExt:
        case Instruction::FPTrunc:
          c[kConversion] += n;
          return;
        default:
          return;
      }
    }
    if (isa<SelectInst>(inst)) {
      add(c, arithmetic_class(type), n);
      return;
    }
    const auto* binary = dyn_cast<BinaryOperator>(&inst);
    if (binary == nullptr) {
      return;  // phis, loads, stores, vector element moves, freeze: no operation
    }
    switch (binary->getOpcode()) {
      case Instruction::FDiv:
        // IEEE division: a reciprocal (special function unit) refined with FP32 fused
        // multiply-adds.
        if (type->isFloatTy()) {
          c[kSpecial] += n;
          c[kFp32Fma] += 2 * n;
        } else if (type->isDoubleTy()) {
          c[kFp64] += 4 * n;
        }
        return;
      case Instruction::FRem:
        return;
      case Instruction::SDiv:
      case Instruction::UDiv:
      case Instruction::SRem:
      case Instruction::URem:
        // By a constant, nvcc multiplies by its inverse: one instruction.
        if (isa<Constant>(binary->getOperand(1))) {
          c[kInteger] += n;
        } else {
          count_integer_division(n, c);
        }
        return;
      default:
        add(c, arithmetic_class(type), n);
        return;
    }
  }

  Function& f_;
  DenseSet<const BasicBlock*> ends_iteration_;
  DenseSet<const Instruction*> overhead_;
  DenseSet<const Instruction*> contracted_;
};

// Whether an access of `bytes` at `address` is not counted: inside one variable, not a __shared__
// array (count_ops.cpp's counted_reference), or into the function's return slot.
bool uncounted_access(const Value* address, uint64_t bytes, const DataLayout& layout,
                      const GlobalVariable* ops) {
  APInt offset(layout.getIndexTypeSizeInBits(address->getType()), 0);
  const Value* base = address->stripAndAccumulateConstantOffsets(layout, offset, true);
  if (const auto* tls = dyn_cast<IntrinsicInst>(base);
      tls != nullptr && tls->getIntrinsicID() == Intrinsic::threadlocal_address) {
    base = tls->getArgOperand(0)->stripAndAccumulateConstantOffsets(layout, offset, true);
  }
  if (const auto* argument = dyn_cast<Argument>(base)) {
    return argument->hasStructRetAttr();
  }
  std::optional<TypeSize> size;
  if (const auto* global = dyn_cast<GlobalVariable>(base)) {
    if (global == ops) {
      return true;
    }
    // A __shared__ array: a function-local static (Itanium mangling: _ZZ) thread_local.
    if (global->isThreadLocal() && global->getName().starts_with("_ZZ")) {
      return false;
    }
    size = layout.getTypeAllocSize(global->getValueType());
  } else if (const auto* local = dyn_cast<AllocaInst>(base)) {
    size = local->getAllocationSize(layout);
  }
  return size.has_value() && !size->isScalable() && offset.isNonNegative() &&
         offset.getZExtValue() + bytes <= size->getFixedValue();
}

// An aggregate copied by value (`float4 v = in[i];`, `out[i] = w;`) is one access of its size on a
// GPU, as in GCC's GIMPLE; clang spells it as a memcpy, whose copy into a local the optimizer then
// splits into the members' own loads. Before the optimizer (the pipeline's start), a memcpy of a
// GPU access's size (2, 4, 8 or 16 bytes) becomes one load and one store of that size, which the
// optimizer keeps whole: a local stored whole and read member by member becomes a vector.
struct WholeCopiesPass : PassInfoMixin<WholeCopiesPass> {
  PreservedAnalyses run(Function& f, FunctionAnalysisManager&) {
    SmallVector<MemCpyInst*> copies;
    for (Instruction& inst : instructions(f)) {
      if (auto* copy = dyn_cast<MemCpyInst>(&inst); copy != nullptr && !copy->isVolatile()) {
        const auto* length = dyn_cast<ConstantInt>(copy->getLength());
        const uint64_t bytes = length != nullptr ? length->getZExtValue() : 0;
        if (bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16) {
          copies.push_back(copy);
        }
      }
    }
    for (MemCpyInst* copy : copies) {
      const uint64_t bytes = cast<ConstantInt>(copy->getLength())->getZExtValue();
      Type* type =
          bytes == 16
              ? static_cast<Type*>(FixedVectorType::get(Type::getInt32Ty(f.getContext()), 4))
              : Type::getIntNTy(f.getContext(), 8 * bytes);
      IRBuilder<> builder(copy);
      LoadInst* value = builder.CreateLoad(type, copy->getSource());
      value->setAlignment(copy->getSourceAlign().valueOrOne());
      StoreInst* stored = builder.CreateStore(value, copy->getDest());
      stored->setAlignment(copy->getDestAlign().valueOrOne());
      copy->eraseFromParent();
    }
    return copies.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
  }
};

struct CountOpsPass : PassInfoMixin<CountOpsPass> {
  PreservedAnalyses run(Module& module, ModuleAnalysisManager&) {
    LLVMContext& context = module.getContext();
    const DataLayout& layout = module.getDataLayout();
    Type* i64 = Type::getInt64Ty(context);
    ArrayType* ops_type = ArrayType::get(i64, kOpSlots);
    auto* ops = cast<GlobalVariable>(module.getOrInsertGlobal("gpulab_sim_ops", ops_type));
    ops->setThreadLocalMode(GlobalValue::InitialExecTLSModel);
    PointerType* pointer = PointerType::getUnqual(context);
    const FunctionCallee load =
        module.getOrInsertFunction("__gpulab_sim_load", Type::getVoidTy(context), pointer, i64);
    const FunctionCallee store =
        module.getOrInsertFunction("__gpulab_sim_store", Type::getVoidTy(context), pointer, i64);
    bool changed = false;
    for (Function& f : module) {
      // A function of the host's library compiled out of line here is not the kernels': see the
      // GCC plugin's execute(). Library code inlined into a kernel is the kernel's, and counted.
      const DISubprogram* subprogram = f.getSubprogram();
      if (f.isDeclaration() || (subprogram != nullptr && in_library(file_of(subprogram)))) {
        continue;
      }
      // Counted first, then changed: the analysis sees the function as compiled.
      SmallVector<std::pair<BasicBlock*, Counts>> blocks;
      if (count_arithmetic_ops) {
        FunctionCounter counter(f);
        for (BasicBlock& bb : f) {
          blocks.emplace_back(&bb, counter.count(bb));
        }
      }
      SmallVector<std::pair<Instruction*, bool>> accesses;  // (access, is a store)
      if (!f.hasFnAttribute(Attribute::DisableSanitizerInstrumentation)) {
        for (Instruction& inst : instructions(f)) {
          if (const auto* l = dyn_cast<LoadInst>(&inst); l != nullptr && !l->isAtomic()) {
            accesses.emplace_back(&inst, false);
          } else if (const auto* s = dyn_cast<StoreInst>(&inst); s != nullptr && !s->isAtomic()) {
            accesses.emplace_back(&inst, true);
          }
        }
      }
      for (auto& [bb, c] : blocks) {
        const auto at = bb->getFirstInsertionPt();
        if (at == bb->end()) {
          continue;
        }
        IRBuilder<> builder(bb, at);
        for (unsigned cls = 0; cls < kOpClasses; ++cls) {
          if (c[cls] != 0) {
            Value* element = builder.CreateConstInBoundsGEP2_64(ops_type, ops, 0, cls);
            Value* before = builder.CreateLoad(i64, element);
            builder.CreateStore(builder.CreateAdd(before, ConstantInt::get(i64, c[cls])), element);
            changed = true;
          }
        }
      }
      for (const auto& [inst, is_store] : accesses) {
        Value* address = getLoadStorePointerOperand(inst);
        Type* type =
            is_store ? cast<StoreInst>(inst)->getValueOperand()->getType() : inst->getType();
        const TypeSize bytes = layout.getTypeStoreSize(type);
        if (bytes.isScalable() || bytes.getFixedValue() == 0 ||
            uncounted_access(address, bytes.getFixedValue(), layout, ops)) {
          continue;
        }
        IRBuilder<> builder(inst);
        builder.CreateCall(is_store ? store : load,
                           {address, ConstantInt::get(i64, bytes.getFixedValue())});
        changed = true;
      }
    }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {
      LLVM_PLUGIN_API_VERSION, "gpulab_count_ops", "1", [](PassBuilder& builder) {
        builder.registerPipelineStartEPCallback([](ModulePassManager& passes, OptimizationLevel) {
          passes.addPass(createModuleToFunctionPassAdaptor(WholeCopiesPass()));
        });
        builder.registerOptimizerLastEPCallback(
            [](ModulePassManager& passes, OptimizationLevel) { passes.addPass(CountOpsPass()); });
      }};
}
