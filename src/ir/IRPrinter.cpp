// Prints IR as Python-like text; IRPrinter.h describes the format.
#include "tessel/ir/IRPrinter.h"

#include <charconv>
#include <cmath>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

// Python's operator precedences, loosest first. An expression is parenthesised when its own
// precedence is below the one its position needs.
enum Prec : int {
    kPrecLet = 0,
    kPrecOr = 1,
    kPrecAnd = 2,
    kPrecNot = 3,
    kPrecCmp = 4,
    kPrecAdd = 5,
    kPrecMul = 6,
    kPrecUnary = 7,  // negative constants
    kPrecAtom = 8,
};

// Unique names for one kind of object, assigned in order of first appearance. The objects are
// kept alive so that a freed address cannot be reused by a new object with the old name.
class Namer {
public:
    const std::string& name(const RefCounted* obj, const std::string& label) {
        auto it = names_.find(obj);
        if (it != names_.end()) return it->second;
        std::string base = label.empty() ? "v" : label;
        std::string n = base;
        for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
        used_.insert(n);
        alive_.emplace_back(obj);
        return names_.emplace(obj, n).first->second;
    }

private:
    std::unordered_map<const RefCounted*, std::string> names_;
    std::unordered_set<std::string> used_;
    std::vector<Ptr<RefCounted>> alive_;
};

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// The shortest digits that read back to the same value of type t (float16 and bfloat16 values
// are exact floats, so float's shortest form round-trips them too).
std::string float_digits(double v, Type t) {
    char buf[64];
    std::to_chars_result r = t.bits == 64
                                 ? std::to_chars(buf, buf + sizeof buf, v)
                                 : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

const char* loop_function(ForKind k) {
    switch (k) {
        case ForKind::Serial: return "range";
        case ForKind::Parallel: return "parallel";
        case ForKind::Vectorized: return "vectorized";
        case ForKind::Unrolled: return "unrolled";
        case ForKind::ThreadBound: return "thread_binding";
    }
    return "?";
}

}  // namespace

class IRPrinter::Impl : public IRVisitor {
public:
    explicit Impl(std::ostream& os) : os_(os) {}
    using IRVisitor::visit;

    /// Prints `e`, parenthesised if its precedence is below `need`.
    void print_expr(const Expr& e, int need = kPrecLet) {
        if (!e.defined()) {
            os_ << "<undefined>";
            return;
        }
        int saved = need_;
        need_ = need;
        visit(e);
        need_ = saved;
    }

    /// Prints `s`; `tail` says no statement follows it in its block.
    void print_stmt(const Stmt& s, bool tail) {
        if (!s.defined()) {
            line() << "<undefined>\n";
            return;
        }
        bool saved = tail_;
        tail_ = tail;
        visit(s);
        tail_ = saved;
    }

    std::ostream& os() { return os_; }
    const std::string& name(const Var& v) { return vars_.name(v.get(), v.name()); }
    const std::string& name(const Buffer& b) { return buffers_.name(b.get(), b.name()); }
    const std::string& name(const Tensor& t) {
        // Handles of one output (op_output makes a new one per call) share one name.
        const Tensor& canon = tensor_canon_.emplace(t, t).first->second;
        return tensors_.name(canon.get(), t.name());
    }

    int indent_ = 0;

protected:
#define TESSEL_PRINTER_DECL(T) void visit(const T* op) override;
    TESSEL_FOR_EACH_EXPR_NODE(TESSEL_PRINTER_DECL)
    TESSEL_FOR_EACH_STMT_NODE(TESSEL_PRINTER_DECL)
#undef TESSEL_PRINTER_DECL

private:
    bool open(int prec) {
        bool paren = prec < need_;
        if (paren) os_ << '(';
        return paren;
    }
    void close(bool paren) {
        if (paren) os_ << ')';
    }
    std::ostream& line() {
        for (int i = 0; i < indent_; ++i) os_ << "    ";
        return os_;
    }
    void block(const Stmt& body) {
        ++indent_;
        print_stmt(body, true);
        --indent_;
    }

    void print_list(const std::vector<Expr>& es) {
        for (size_t i = 0; i < es.size(); ++i) {
            if (i) os_ << ", ";
            print_expr(es[i]);
        }
    }
    void binary(const Expr& a, const Expr& b, const char* symbol, int prec) {
        bool paren = open(prec);
        // Left-associative, except comparisons, which Python would chain.
        print_expr(a, prec == kPrecCmp ? prec + 1 : prec);
        os_ << ' ' << symbol << ' ';
        print_expr(b, prec + 1);
        close(paren);
    }
    void call(const char* fn, const std::vector<Expr>& args) {
        os_ << fn << '(';
        print_list(args);
        os_ << ')';
    }
    // `min, end` of a loop or axis over [min, min + extent), folding constants.
    void print_bounds(const Expr& min, const Expr& extent) {
        print_expr(min);
        os_ << ", ";
        auto m = as_const_int(min), e = as_const_int(extent);
        if (m && e && !min.type().is_vector()) {
            print_expr(make_const(min.type(), *m + *e));
        } else if (is_zero(min)) {
            print_expr(extent);
        } else {
            bool paren = open(kPrecAdd);
            print_expr(min, kPrecAdd);
            os_ << " + ";
            print_expr(extent, kPrecAdd + 1);
            close(paren);
        }
    }
    // Closes the scope of a LetStmt or Allocate when later statements are outside it.
    void end_scope(bool tail, const char* what, const std::string& who) {
        if (!tail) line() << "# end " << what << ' ' << who << '\n';
    }

    std::ostream& os_;
    int need_ = kPrecLet;
    bool tail_ = true;
    Namer vars_, buffers_, tensors_;
    std::unordered_map<Tensor, Tensor, TensorHash, TensorEqual> tensor_canon_;
};

// ---------------------------------------------------------------------------------------------
// Expressions

void IRPrinter::Impl::visit(const IntImm* op) {
    if (op->type.is_bool()) {
        os_ << (op->value ? "True" : "False");
    } else if (op->type == Int(32)) {
        bool paren = open(op->value < 0 ? kPrecUnary : kPrecAtom);
        os_ << op->value;
        close(paren);
    } else {
        os_ << op->type << '(' << op->value << ')';
    }
}

void IRPrinter::Impl::visit(const UIntImm* op) {
    os_ << op->type << '(' << op->value << ')';
}

void IRPrinter::Impl::visit(const FloatImm* op) {
    double v = op->value;
    Type t = op->type;
    if (!std::isfinite(v)) {
        os_ << t << '(' << (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf") << ')';
    } else if (t == Float(32) || t == Float(64)) {
        bool paren = open(std::signbit(v) ? kPrecUnary : kPrecAtom);
        os_ << float_digits(v, t) << (t.bits == 32 ? "f" : "");
        close(paren);
    } else {
        os_ << t << '(' << float_digits(v, t) << ')';
    }
}

void IRPrinter::Impl::visit(const Variable* op) {
    os_ << name(Var(op));
}

void IRPrinter::Impl::visit(const Cast* op) {
    os_ << op->type << '(';
    print_expr(op->value);
    os_ << ')';
}

void IRPrinter::Impl::visit(const Add* op) {
    binary(op->a, op->b, "+", kPrecAdd);
}
void IRPrinter::Impl::visit(const Sub* op) {
    binary(op->a, op->b, "-", kPrecAdd);
}
void IRPrinter::Impl::visit(const Mul* op) {
    binary(op->a, op->b, "*", kPrecMul);
}
void IRPrinter::Impl::visit(const Div* op) {
    if (op->type.is_float()) {
        binary(op->a, op->b, "/", kPrecMul);
    } else {
        call("truncdiv", {op->a, op->b});
    }
}
void IRPrinter::Impl::visit(const Mod* op) {
    call(op->type.is_float() ? "fmod" : "truncmod", {op->a, op->b});
}
void IRPrinter::Impl::visit(const FloorDiv* op) {
    binary(op->a, op->b, "//", kPrecMul);
}
void IRPrinter::Impl::visit(const FloorMod* op) {
    binary(op->a, op->b, "%", kPrecMul);
}
void IRPrinter::Impl::visit(const Min* op) {
    call("min", {op->a, op->b});
}
void IRPrinter::Impl::visit(const Max* op) {
    call("max", {op->a, op->b});
}
void IRPrinter::Impl::visit(const EQ* op) {
    binary(op->a, op->b, "==", kPrecCmp);
}
void IRPrinter::Impl::visit(const NE* op) {
    binary(op->a, op->b, "!=", kPrecCmp);
}
void IRPrinter::Impl::visit(const LT* op) {
    binary(op->a, op->b, "<", kPrecCmp);
}
void IRPrinter::Impl::visit(const LE* op) {
    binary(op->a, op->b, "<=", kPrecCmp);
}
void IRPrinter::Impl::visit(const GT* op) {
    binary(op->a, op->b, ">", kPrecCmp);
}
void IRPrinter::Impl::visit(const GE* op) {
    binary(op->a, op->b, ">=", kPrecCmp);
}
void IRPrinter::Impl::visit(const And* op) {
    binary(op->a, op->b, "and", kPrecAnd);
}
void IRPrinter::Impl::visit(const Or* op) {
    binary(op->a, op->b, "or", kPrecOr);
}

void IRPrinter::Impl::visit(const Not* op) {
    bool paren = open(kPrecNot);
    os_ << "not ";
    print_expr(op->a, kPrecNot);
    close(paren);
}

void IRPrinter::Impl::visit(const Select* op) {
    call("select", {op->condition, op->true_value, op->false_value});
}

void IRPrinter::Impl::visit(const Ramp* op) {
    os_ << "ramp(";
    print_expr(op->base);
    os_ << ", ";
    print_expr(op->stride);
    os_ << ", " << op->lanes << ')';
}

void IRPrinter::Impl::visit(const Broadcast* op) {
    os_ << "broadcast(";
    print_expr(op->value);
    os_ << ", " << op->lanes << ')';
}

void IRPrinter::Impl::visit(const Let* op) {
    bool paren = open(kPrecLet);
    os_ << "let " << name(op->var) << " = ";
    print_expr(op->value, kPrecOr);
    os_ << " in ";
    print_expr(op->body, kPrecLet);
    close(paren);
}

void IRPrinter::Impl::visit(const Call* op) {
    call(intrinsic_name(op->op), op->args);
}

void IRPrinter::Impl::visit(const TensorRead* op) {
    os_ << name(op->tensor) << '[';
    print_list(op->indices);
    os_ << ']';
}

void IRPrinter::Impl::visit(const Reduce* op) {
    os_ << op->combiner->name << '(';
    print_list(op->source);
    os_ << ", axis=[";
    for (size_t i = 0; i < op->axis.size(); ++i) {
        if (i) os_ << ", ";
        os_ << name(op->axis[i].var()) << " in range(";
        print_bounds(op->axis[i].dom().min, op->axis[i].dom().extent);
        os_ << ')';
    }
    os_ << ']';
    if (!is_one(op->condition)) {
        os_ << ", where=";
        print_expr(op->condition);
    }
    if (op->combiner.num_values() > 1) os_ << ", value_index=" << op->value_index;
    os_ << ')';
}

void IRPrinter::Impl::visit(const Load* op) {
    os_ << name(op->buffer_var) << '[';
    print_expr(op->index);
    if (op->predicate.defined()) {
        os_ << ", pred=";
        print_expr(op->predicate);
    }
    os_ << ']';
}

void IRPrinter::Impl::visit(const BufferLoad* op) {
    os_ << name(op->buffer) << '[';
    print_list(op->indices);
    os_ << ']';
}

// ---------------------------------------------------------------------------------------------
// Statements

void IRPrinter::Impl::visit(const LetStmt* op) {
    bool tail = tail_;
    line() << "let " << name(op->var) << " = ";
    print_expr(op->value);
    os_ << '\n';
    print_stmt(op->body, tail);
    end_scope(tail, "let", name(op->var));
}

void IRPrinter::Impl::visit(const AttrStmt* op) {
    line() << "attr " << op->key;
    if (op->value.defined()) {
        os_ << " = ";
        print_expr(op->value);
    }
    os_ << ":\n";
    block(op->body);
}

void IRPrinter::Impl::visit(const AssertStmt* op) {
    line() << "assert(";
    print_expr(op->condition);
    os_ << ", " << quote(op->message) << ")\n";
}

void IRPrinter::Impl::visit(const For* op) {
    line() << "for " << name(op->loop_var) << " in " << loop_function(op->kind) << '(';
    print_bounds(op->min, op->extent);
    if (op->kind == ForKind::ThreadBound) os_ << ", " << quote(op->thread_tag);
    os_ << "):\n";
    block(op->body);
}

void IRPrinter::Impl::visit(const Store* op) {
    line() << name(op->buffer_var) << '[';
    print_expr(op->index);
    if (op->predicate.defined()) {
        os_ << ", pred=";
        print_expr(op->predicate);
    }
    os_ << "] = ";
    print_expr(op->value);
    os_ << '\n';
}

void IRPrinter::Impl::visit(const BufferStore* op) {
    line() << name(op->buffer) << '[';
    print_list(op->indices);
    os_ << "] = ";
    print_expr(op->value);
    os_ << '\n';
}

void IRPrinter::Impl::visit(const Allocate* op) {
    bool tail = tail_;
    line() << "allocate " << name(op->buffer_var) << ": " << op->dtype << '[';
    print_list(op->extents);
    os_ << "] (" << scope_name(op->scope) << ")\n";
    print_stmt(op->body, tail);
    end_scope(tail, "allocate", name(op->buffer_var));
}

void IRPrinter::Impl::visit(const Seq* op) {
    bool tail = tail_;
    for (size_t i = 0; i < op->stmts.size(); ++i)
        print_stmt(op->stmts[i], tail && i + 1 == op->stmts.size());
}

void IRPrinter::Impl::visit(const IfThenElse* op) {
    line() << "if ";
    print_expr(op->condition);
    os_ << ":\n";
    block(op->then_case);
    Stmt rest = op->else_case;
    while (rest.defined()) {
        const auto* elif = rest.as<IfThenElse>();
        if (!elif) {
            line() << "else:\n";
            block(rest);
            break;
        }
        line() << "elif ";
        print_expr(elif->condition);
        os_ << ":\n";
        block(elif->then_case);
        rest = elif->else_case;
    }
}

void IRPrinter::Impl::visit(const Evaluate* op) {
    line();
    print_expr(op->value);
    os_ << '\n';
}

// ---------------------------------------------------------------------------------------------
// Public interface

IRPrinter::IRPrinter(std::ostream& os) : impl_(std::make_unique<Impl>(os)) {}
IRPrinter::~IRPrinter() = default;

void IRPrinter::print(const Expr& e) {
    impl_->print_expr(e);
}

void IRPrinter::print(const Stmt& s, int indent) {
    int saved = impl_->indent_;
    impl_->indent_ = indent;
    impl_->print_stmt(s, true);
    impl_->indent_ = saved;
}

void IRPrinter::print(const Buffer& b) {
    impl_->os() << impl_->name(b);
}
void IRPrinter::print(const Tensor& t) {
    impl_->os() << impl_->name(t);
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
    IRPrinter(os).print(e);
    return os;
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) {
    IRPrinter(os).print(s);
    return os;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    return os << (t.defined() ? t.name() : "<undefined>");
}

std::ostream& operator<<(std::ostream& os, const Operation& op) {
    return os << (op.defined() ? op->name : "<undefined>");
}

std::ostream& operator<<(std::ostream& os, const Buffer& b) {
    if (!b.defined()) return os << "<undefined>";
    IRPrinter p(os);
    os << b.name() << ": " << b.dtype() << '[';
    for (size_t i = 0; i < b.shape().size(); ++i) {
        if (i) os << ", ";
        p.print(b.shape()[i]);
    }
    os << ']';
    if (b->scope != StorageScope::Global) os << " (" << scope_name(b->scope) << ')';
    return os;
}

std::string to_string(const Expr& e) {
    std::ostringstream os;
    os << e;
    return os.str();
}

std::string to_string(const Stmt& s) {
    std::ostringstream os;
    os << s;
    return os.str();
}

}  // namespace tessel
