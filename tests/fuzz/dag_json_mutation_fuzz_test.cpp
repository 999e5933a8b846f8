// Fuzzes dag_from_json with mutated documents: valid JSON DAGs of every suite operator with one to
// three random edits (a value replaced by another of a random kind, a field removed, two values
// swapped) must read back or throw DSLError; never another exception, never a crash. What reads
// back must be a usable DAG: it hashes, prints, schedules and writes again.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "fuzz/support/OperatorSuite.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/PrintDAG.h"
#include "tessel/te/Serialize.h"

using namespace tessel;
using json = nlohmann::json;

namespace {

constexpr uint64_t kSeed = 0xda65e7;
constexpr int kCasesPerOperator = 300;

// Every value of the document, with the object (or null) holding it and its key.
struct Slot {
    json* value;
    json* parent;
    std::string key;
};

void collect(json& j, json* parent, const std::string& key, std::vector<Slot>* out) {
    out->push_back({&j, parent, key});
    if (j.is_object())
        for (auto& [k, v] : j.items()) collect(v, &j, k, out);
    if (j.is_array())
        for (auto& v : j) collect(v, &j, "", out);
}

json random_value(std::mt19937_64& rng) {
    switch (rng() % 9) {
        case 0: return nullptr;
        case 1: return static_cast<int64_t>(rng() % 7) - 2;
        case 2: return static_cast<int64_t>(rng());
        case 3: return 2.5;
        case 4: return "float32";
        case 5: return json::array({0, 0});
        case 6: return json::object({{"node", "Variable"}, {"id", rng() % 12}});
        case 7: return std::numeric_limits<uint64_t>::max();
        default: return json::object();
    }
}

void mutate(json& doc, std::mt19937_64& rng) {
    std::vector<Slot> slots;
    collect(doc, nullptr, "", &slots);
    Slot& s = slots[rng() % slots.size()];
    int kind = static_cast<int>(rng() % 3);
    if (kind == 0 && s.parent && s.parent->is_object()) {
        s.parent->erase(s.key);
    } else if (kind == 1) {
        Slot& other = slots[rng() % slots.size()];
        json copy = *other.value;  // (not a swap: one may contain the other)
        *s.value = std::move(copy);
    } else {
        *s.value = random_value(rng);
    }
}

// Reads a mutated document; returns false if it was rejected with a DSLError.
bool read_mutated(const std::string& text, int64_t* accepted) {
    TensorDAG dag;
    try {
        dag = dag_from_json(text);
    } catch (const DSLError&) {
        return false;
    }
    ++*accepted;
    dag_hash(dag.outputs);
    dag_to_string(dag.outputs);
    create_schedule(dag.outputs);
    dag_to_json(dag);
    return true;
}

}  // namespace

TEST(DagJsonMutationFuzz, MutatedDocumentsReadOrThrowDSLError) {
    std::mt19937_64 rng(kSeed);
    int64_t cases = 0, accepted = 0;
    for (const std::string& name : fuzz::operator_names()) {
        const json original = json::parse(dag_to_json(fuzz::make_operator(name).outputs));
        for (int c = 0; c < kCasesPerOperator; ++c, ++cases) {
            json doc = original;
            int edits = 1 + static_cast<int>(rng() % 3);
            for (int e = 0; e < edits; ++e) mutate(doc, rng);
            std::string text = doc.dump();
            try {
                read_mutated(text, &accepted);
            } catch (const std::exception& e) {
                ADD_FAILURE() << name << ", case " << c << ": " << e.what() << "\n" << text;
                return;
            }
        }
    }
    std::printf("dag json fuzz: seed %llu, %lld cases, %lld read back\n",
                static_cast<unsigned long long>(kSeed), static_cast<long long>(cases),
                static_cast<long long>(accepted));
}
