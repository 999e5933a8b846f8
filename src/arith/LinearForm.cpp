// Linear forms: the canonical shape of integer index arithmetic.
#include "LinearForm.h"

#include <algorithm>

#include "ExprEqual.h"
#include "IntMath.h"

namespace tessel::internal {

int64_t wrap_signed(int64_t v, int bits) {
    return wrap_to_int_type(v, Int(bits));
}

namespace {
// Wrapping arithmetic on coefficients; sets *wrapped when the result is not the exact value.
int64_t mul_wrap(int64_t a, int64_t b, int bits, bool* wrapped = nullptr) {
    int64_t r = wrap_signed(
        static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)), bits);
    if (wrapped && int128(r) != int128(a) * b) *wrapped = true;
    return r;
}
int64_t add_wrap(int64_t a, int64_t b, int bits, bool* wrapped = nullptr) {
    int64_t r = wrap_signed(
        static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)), bits);
    if (wrapped && int128(r) != int128(a) + b) *wrapped = true;
    return r;
}
}  // namespace

void LinearForm::add_term(const Expr& term, int64_t coeff) {
    for (LinearTerm& t : terms) {
        if (expr_equal(t.term, term)) {
            t.coeff = add_wrap(t.coeff, coeff, type.bits, &wrapped);
            return;
        }
    }
    if (wrap_signed(coeff, type.bits) != coeff) wrapped = true;
    terms.push_back({term, wrap_signed(coeff, type.bits)});
}

void LinearForm::add(const Expr& e, int64_t scale) {
    if (auto c = const_bits(e)) {
        int64_t v = type.is_uint() ? wrap_signed(*c, type.bits) : *c;
        if (type.is_uint() && v != *c) wrapped = true;
        constant = add_wrap(constant, mul_wrap(v, scale, type.bits, &wrapped), type.bits, &wrapped);
    } else if (const auto* op = e.as<Add>()) {
        add(op->a, scale);
        add(op->b, scale);
    } else if (const auto* op = e.as<Sub>()) {
        add(op->a, scale);
        add(op->b, mul_wrap(scale, -1, type.bits, &wrapped));
    } else if (const auto* op = e.as<Mul>()) {
        if (auto cb = const_bits(op->b)) {
            add(op->a, mul_wrap(scale, *cb, type.bits, &wrapped));
        } else if (auto ca = const_bits(op->a)) {
            add(op->b, mul_wrap(scale, *ca, type.bits, &wrapped));
        } else {
            add_term(e, scale);
        }
    } else {
        add_term(e, scale);
    }
}

void LinearForm::add_form(const LinearForm& other, int64_t scale) {
    for (const LinearTerm& t : other.terms)
        add_term(t.term, mul_wrap(t.coeff, scale, type.bits, &wrapped));
    constant = add_wrap(constant, mul_wrap(other.constant, scale, type.bits, &wrapped), type.bits,
                        &wrapped);
    wrapped = wrapped || other.wrapped;
}

void LinearForm::prune() {
    std::vector<LinearTerm> kept;
    for (LinearTerm& t : terms) {
        if (t.coeff != 0) kept.push_back(std::move(t));
    }
    terms = std::move(kept);
}

int64_t LinearForm::coeff_gcd() const {
    int64_t g = 0;
    for (const LinearTerm& t : terms) g = gcd64(g, t.coeff);
    return g;
}

LinearForm linear_form(const Expr& e) {
    LinearForm f;
    f.type = e.type();
    f.add(e, 1);
    f.prune();
    return f;
}

LinearForm linear_difference(const Expr& a, const Expr& b) {
    LinearForm f;
    f.type = a.type();
    f.add(a, 1);
    f.add(b, -1);
    f.prune();
    return f;
}

namespace {
bool contains_all_terms(const LinearForm& form, const LinearForm& part) {
    for (const LinearTerm& p : part.terms) {
        bool found = false;
        for (const LinearTerm& t : form.terms) found = found || expr_equal(t.term, p.term);
        if (!found) return false;
    }
    return !part.terms.empty();
}

// Tries one floordiv/floormod term i; see merge_div_mod.
bool merge_one(LinearForm* form, size_t i) {
    const LinearTerm t = form->terms[i];  // a copy: the form changes below
    const Expr* y = nullptr;
    int64_t c = 0;
    bool is_div = false;
    if (const auto* d = t.term.as<FloorDiv>()) {
        y = &d->a, c = const_bits(d->b).value_or(0), is_div = true;
    } else if (const auto* m = t.term.as<FloorMod>()) {
        y = &m->a, c = const_bits(m->b).value_or(0);
    }
    if (!y || c <= 0) return false;
    // y = c*floordiv(y, c) + floormod(y, c)
    Expr div = FloorDiv::make(*y, make_const(y->type(), c));
    Expr mod = FloorMod::make(*y, make_const(y->type(), c));
    LinearForm ly = linear_form(*y);
    if (is_div) {
        // coeff = -c*k with y present: k*y - c*k*fd → k*fm
        if (t.coeff % c != 0 || !contains_all_terms(*form, ly)) return false;
        int64_t k = -(t.coeff / c);
        form->add_form(ly, -k);
        form->add_term(div, -t.coeff);
        form->add_term(mod, k);
    } else {
        // c*k*fd + k*fm → k*y, when the floordiv term is there with coefficient c*k. With y
        // itself floordiv(x, a), fd is written floordiv(x, a*c) (the simplifier's rule for a
        // division of a division): a fused loop's digits, (x / 49) * 49 + (x / 7 % 7) * 7.
        if (const auto* inner = y->as<FloorDiv>()) {
            const int64_t a = const_bits(inner->b).value_or(0);
            if (a > 0 && a <= Int(y->type().bits).max_int() / c)
                div = FloorDiv::make(inner->a, make_const(y->type(), a * c));
        }
        int64_t k = t.coeff;
        bool found = false;
        for (const LinearTerm& o : form->terms)
            found =
                found || (expr_equal(o.term, div) && o.coeff == mul_wrap(c, k, form->type.bits));
        if (!found) return false;
        form->add_term(div, -mul_wrap(c, k, form->type.bits));
        form->add_term(mod, -k);
        form->add_form(ly, k);
    }
    form->prune();
    return true;
}
}  // namespace

bool merge_div_mod(LinearForm* form) {
    bool any = false;
    for (size_t i = 0; i < form->terms.size(); ++i) {
        if (merge_one(form, i)) {
            any = true;
            i = static_cast<size_t>(-1);  // restart: terms moved
        }
    }
    return any;
}

namespace {
Expr scaled(const Expr& term, int64_t coeff) {
    if (coeff == 1) return term;
    return Mul::make(term, make_const(term.type(), coeff));
}
}  // namespace

Expr linear_to_expr(const LinearForm& form) {
    Type t = form.type;
    int64_t smin = Int(t.bits).min_int();
    Expr acc;
    for (const LinearTerm& term : form.terms) {
        if (term.coeff < 0 && term.coeff != smin) continue;
        Expr s = scaled(term.term, term.coeff);
        acc = acc.defined() ? Add::make(acc, s) : s;
    }
    if (!acc.defined()) acc = make_const(t, form.constant);
    for (const LinearTerm& term : form.terms) {
        if (term.coeff >= 0 || term.coeff == smin) continue;
        acc = Sub::make(acc, scaled(term.term, -term.coeff));
    }
    bool constant_first =
        std::all_of(form.terms.begin(), form.terms.end(),
                    [&](const LinearTerm& x) { return x.coeff < 0 && x.coeff != smin; });
    if (constant_first || form.constant == 0) return acc;
    if (form.constant < 0 && form.constant != smin)
        return Sub::make(acc, make_const(t, -form.constant));
    return Add::make(acc, make_const(t, form.constant));
}

}  // namespace tessel::internal
