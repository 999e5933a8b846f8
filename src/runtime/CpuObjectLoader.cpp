// Links a relocatable ELF object into memory (CpuObjectLoader.h). The layout is one mapping:
// executable sections, then the call stubs, then (page-aligned) the other sections and the GOT;
// after relocation the first part becomes read+execute and the rest stays read+write.
#include "runtime/CpuObjectLoader.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "tessel/Error.h"
#include "tessel/runtime/Kernel.h"
#include "tessel/runtime/ThreadPool.h"
#include "tessel/runtime/Workspace.h"

namespace tessel::internal {

namespace {

constexpr size_t kStubBytes = 16;  // jmp *0(%rip); .quad target; 2 bytes of padding

// Reads the object with every offset and size checked against its length, and every table
// checked to be aligned for its type (a real object's are; a corrupt one's need not be).
class ElfView {
public:
    explicit ElfView(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
    template <typename T>
    const T* at(uint64_t offset, uint64_t count = 1) const {
        if (count != 0 && (offset > bytes_.size() || count > (bytes_.size() - offset) / sizeof(T)))
            TESSEL_THROW(RuntimeError)
                << "cpu-object payload: truncated or corrupt ELF object (" << bytes_.size()
                << " bytes, needed " << count * sizeof(T) << " at offset " << offset << ")";
        if (reinterpret_cast<uintptr_t>(bytes_.data() + offset) % alignof(T) != 0)
            TESSEL_THROW(RuntimeError) << "cpu-object payload: corrupt ELF object (a table at "
                                          "offset "
                                       << offset << " is not aligned for its entries)";
        return reinterpret_cast<const T*>(bytes_.data() + offset);
    }
    std::string string_at(const Elf64_Shdr& table, uint64_t index) const {
        if (index >= table.sh_size) TESSEL_THROW(RuntimeError) << "cpu-object payload: bad name";
        const char* s = at<char>(table.sh_offset, table.sh_size) + index;
        size_t n = strnlen(s, table.sh_size - index);
        if (n == table.sh_size - index)
            TESSEL_THROW(RuntimeError) << "cpu-object payload: unterminated name";
        return std::string(s, n);
    }
    size_t size() const { return bytes_.size(); }

private:
    const std::vector<uint8_t>& bytes_;
};

// Executable memory holding one linked object; unmapped when the last kernel using it dies.
class ObjectCode : public LoadedCode {
public:
    ObjectCode(uint8_t* base, size_t size, std::map<std::string, void*> functions)
        : base_(base), size_(size), functions_(std::move(functions)) {}
    ~ObjectCode() override { munmap(base_, size_); }
    ObjectCode(const ObjectCode&) = delete;
    ObjectCode& operator=(const ObjectCode&) = delete;
    KernelEntry lookup(const std::string& name) const override {
        auto it = functions_.find(name);
        return it == functions_.end() ? nullptr : reinterpret_cast<KernelEntry>(it->second);
    }

private:
    uint8_t* base_;
    size_t size_;
    std::map<std::string, void*> functions_;
};

// Where an undefined symbol comes from: tessel's runtime (by address, so it is found also where
// the runtime's symbols are not global, as in the Python extension), the process, libmvec.
void* resolve_external(const std::string& name) {
    static const std::map<std::string, void*> runtime = {
        {"tessel_parallel_for", reinterpret_cast<void*>(&tessel_parallel_for)},
        {"tessel_report_kernel_error", reinterpret_cast<void*>(&tessel_report_kernel_error)},
        {"tessel_workspace_alloc", reinterpret_cast<void*>(&tessel_workspace_alloc)},
        {"tessel_workspace_free", reinterpret_cast<void*>(&tessel_workspace_free)},
    };
    auto it = runtime.find(name);
    if (it != runtime.end()) return it->second;
    if (void* p = dlsym(RTLD_DEFAULT, name.c_str())) return p;
    static void* libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    static void* libmvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
    for (void* lib : {libm, libmvec}) {
        if (!lib) continue;
        if (void* p = dlsym(lib, name.c_str())) return p;
    }
    TESSEL_THROW(RuntimeError) << "cpu-object payload: undefined symbol '" << name
                               << "' is not in tessel's runtime, the process, libm or libmvec";
}

uint64_t align_up(uint64_t v, uint64_t a) {
    return a <= 1 ? v : (v + a - 1) / a * a;
}

struct Section {
    const Elf64_Shdr* header = nullptr;
    std::string name;
    bool loaded = false;
    uint64_t offset = 0;  // in the mapping
};

// The object being linked: its sections, symbols and the mapping they go to.
class Linker {
public:
    explicit Linker(const std::vector<uint8_t>& bytes) : elf_(bytes) {}
    std::shared_ptr<const LoadedCode> link();

private:
    void read_headers();
    void plan_layout();
    void copy_sections();
    uint64_t symbol_address(uint32_t index);
    uint64_t stub_for(uint32_t index);
    uint64_t got_slot_for(uint32_t index);
    void relocate(const Elf64_Shdr& rela);
    void apply(const Elf64_Rela& r, const Section& target);
    std::map<std::string, void*> global_functions();

    ElfView elf_;
    const Elf64_Ehdr* header_ = nullptr;
    std::vector<Section> sections_;
    const Elf64_Shdr* symtab_ = nullptr;
    const Elf64_Shdr* strtab_ = nullptr;
    size_t num_symbols_ = 0;
    uint64_t stubs_offset_ = 0, data_offset_ = 0, got_offset_ = 0, total_ = 0;
    size_t max_external_ = 0;
    std::map<uint32_t, uint64_t> stubs_, got_;  // symbol index -> offset in the mapping
    uint8_t* base_ = nullptr;
};

void Linker::read_headers() {
    header_ = elf_.at<Elf64_Ehdr>(0);
    const unsigned char* id = header_->e_ident;
    if (std::memcmp(id, ELFMAG, SELFMAG) != 0 || id[EI_CLASS] != ELFCLASS64 ||
        id[EI_DATA] != ELFDATA2LSB || header_->e_type != ET_REL ||
        header_->e_machine != EM_X86_64 || header_->e_shentsize != sizeof(Elf64_Shdr))
        TESSEL_THROW(RuntimeError)
            << "cpu-object payload: not a relocatable x86-64 ELF64 object for this machine";
    const Elf64_Shdr* headers = elf_.at<Elf64_Shdr>(header_->e_shoff, header_->e_shnum);
    if (header_->e_shstrndx >= header_->e_shnum)
        TESSEL_THROW(RuntimeError) << "cpu-object payload: bad section name table index";
    const Elf64_Shdr& names = headers[header_->e_shstrndx];
    for (size_t i = 0; i < header_->e_shnum; ++i) {
        Section s{&headers[i], elf_.string_at(names, headers[i].sh_name)};
        uint64_t flags = s.header->sh_flags;
        if (flags & SHF_TLS)
            TESSEL_THROW(RuntimeError) << "cpu-object payload: thread-local section " << s.name;
        s.loaded = (flags & SHF_ALLOC) && s.header->sh_size > 0 && s.name != ".eh_frame";
        if (s.loaded && (s.name.starts_with(".init_array") || s.name.starts_with(".ctors")))
            TESSEL_THROW(RuntimeError) << "cpu-object payload: constructors are not supported";
        if (s.header->sh_type == SHT_SYMTAB) symtab_ = s.header;
        if (s.header->sh_type == SHT_RELA) max_external_ += s.header->sh_size / sizeof(Elf64_Rela);
        if (s.header->sh_type == SHT_REL)
            TESSEL_THROW(RuntimeError) << "cpu-object payload: REL relocations are not supported";
        sections_.push_back(std::move(s));
    }
    if (!symtab_ || symtab_->sh_link >= sections_.size() ||
        symtab_->sh_entsize != sizeof(Elf64_Sym))
        TESSEL_THROW(RuntimeError) << "cpu-object payload: no valid symbol table";
    strtab_ = sections_[symtab_->sh_link].header;
    num_symbols_ = symtab_->sh_size / sizeof(Elf64_Sym);
    elf_.at<Elf64_Sym>(symtab_->sh_offset, num_symbols_);
}

// Executable sections and stubs first, then the rest and the GOT on fresh pages. The stub and
// GOT areas are sized for one entry per relocation: an upper bound, small next to the code.
void Linker::plan_layout() {
    uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    uint64_t offset = 0;
    for (bool executable : {true, false}) {
        for (Section& s : sections_) {
            if (!s.loaded || bool(s.header->sh_flags & SHF_EXECINSTR) != executable) continue;
            if (s.header->sh_size > (uint64_t(1) << 31))
                TESSEL_THROW(RuntimeError)
                    << "cpu-object payload: section " << s.name << " is too large";
            if (s.header->sh_addralign > page)
                TESSEL_THROW(RuntimeError) << "cpu-object payload: section " << s.name
                                           << " needs an alignment above a page";
            offset = align_up(offset, s.header->sh_addralign);
            s.offset = offset;
            offset += s.header->sh_size;
        }
        if (executable) {
            stubs_offset_ = align_up(offset, kStubBytes);
            offset = data_offset_ = align_up(stubs_offset_ + max_external_ * kStubBytes, page);
        }
    }
    got_offset_ = align_up(offset, 8);
    total_ = align_up(got_offset_ + max_external_ * 8, page);
    if (total_ > (uint64_t(1) << 31))
        TESSEL_THROW(RuntimeError) << "cpu-object payload: object too large to load";
}

void Linker::copy_sections() {
    void* p = mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) TESSEL_THROW(RuntimeError) << "cpu-object payload: out of memory";
    base_ = static_cast<uint8_t*>(p);
    for (const Section& s : sections_) {
        if (!s.loaded || s.header->sh_type == SHT_NOBITS) continue;
        std::memcpy(base_ + s.offset, elf_.at<uint8_t>(s.header->sh_offset, s.header->sh_size),
                    s.header->sh_size);
    }
}

uint64_t Linker::symbol_address(uint32_t index) {
    if (index >= num_symbols_) TESSEL_THROW(RuntimeError) << "cpu-object payload: bad symbol";
    const Elf64_Sym& sym = elf_.at<Elf64_Sym>(symtab_->sh_offset, num_symbols_)[index];
    if (sym.st_shndx == SHN_UNDEF)
        return reinterpret_cast<uint64_t>(resolve_external(elf_.string_at(*strtab_, sym.st_name)));
    if (sym.st_shndx == SHN_ABS) return sym.st_value;
    if (sym.st_shndx >= sections_.size() || !sections_[sym.st_shndx].loaded)
        TESSEL_THROW(RuntimeError) << "cpu-object payload: symbol in an unloaded or special "
                                   << "section (" << sym.st_shndx << ")";
    return reinterpret_cast<uint64_t>(base_ + sections_[sym.st_shndx].offset) + sym.st_value;
}

bool is_undefined(const ElfView& elf, const Elf64_Shdr& symtab, uint32_t index) {
    return elf.at<Elf64_Sym>(symtab.sh_offset + uint64_t(index) * sizeof(Elf64_Sym))->st_shndx ==
           SHN_UNDEF;
}

uint64_t Linker::stub_for(uint32_t index) {
    auto [it, fresh] = stubs_.emplace(index, stubs_offset_ + stubs_.size() * kStubBytes);
    if (fresh) {
        TESSEL_CHECK(stubs_.size() <= max_external_) << "stub area overflow";
        uint8_t* stub = base_ + it->second;
        const uint8_t jmp[6] = {0xFF, 0x25, 0, 0, 0, 0};  // jmp *0(%rip)
        uint64_t target = symbol_address(index);
        std::memcpy(stub, jmp, 6);
        std::memcpy(stub + 6, &target, 8);
    }
    return reinterpret_cast<uint64_t>(base_ + it->second);
}

uint64_t Linker::got_slot_for(uint32_t index) {
    auto [it, fresh] = got_.emplace(index, got_offset_ + got_.size() * 8);
    if (fresh) {
        TESSEL_CHECK(got_.size() <= max_external_) << "GOT overflow";
        uint64_t target = symbol_address(index);
        std::memcpy(base_ + it->second, &target, 8);
    }
    return reinterpret_cast<uint64_t>(base_ + it->second);
}

void write_pc32(uint8_t* where, int64_t value) {
    if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
        TESSEL_THROW(RuntimeError) << "cpu-object payload: PC-relative relocation out of range";
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(where, &v, 4);
}

void Linker::apply(const Elf64_Rela& r, const Section& target) {
    uint32_t type = static_cast<uint32_t>(ELF64_R_TYPE(r.r_info));
    uint64_t width = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
    if (r.r_offset > target.header->sh_size || target.header->sh_size - r.r_offset < width)
        TESSEL_THROW(RuntimeError) << "cpu-object payload: relocation outside its section";
    uint8_t* where = base_ + target.offset + r.r_offset;
    uint64_t place = reinterpret_cast<uint64_t>(where);
    uint32_t sym = static_cast<uint32_t>(ELF64_R_SYM(r.r_info));
    if (sym >= num_symbols_) TESSEL_THROW(RuntimeError) << "cpu-object payload: bad symbol";
    int64_t addend = r.r_addend;
    switch (type) {
        case R_X86_64_NONE: return;
        case R_X86_64_64: {
            uint64_t v = symbol_address(sym) + addend;
            std::memcpy(where, &v, 8);
            return;
        }
        case R_X86_64_PC64: {
            uint64_t v = symbol_address(sym) + addend - place;
            std::memcpy(where, &v, 8);
            return;
        }
        case R_X86_64_PC32:
        case R_X86_64_PLT32: {
            // A call or reference to another library goes through a stub within reach.
            uint64_t s = is_undefined(elf_, *symtab_, sym) ? stub_for(sym) : symbol_address(sym);
            write_pc32(where, static_cast<int64_t>(s + addend - place));
            return;
        }
        case R_X86_64_GOTPCREL:
        case R_X86_64_GOTPCRELX:
        case R_X86_64_REX_GOTPCRELX:
            write_pc32(where, static_cast<int64_t>(got_slot_for(sym) + addend - place));
            return;
        default:
            TESSEL_THROW(RuntimeError) << "cpu-object payload: unsupported relocation type " << type
                                       << " in " << target.name;
    }
}

void Linker::relocate(const Elf64_Shdr& rela) {
    if (rela.sh_info >= sections_.size())
        TESSEL_THROW(RuntimeError) << "cpu-object payload: bad relocation section";
    const Section& target = sections_[rela.sh_info];
    if (!target.loaded) return;  // e.g. .rela.eh_frame, debug information
    if (rela.sh_entsize != sizeof(Elf64_Rela))
        TESSEL_THROW(RuntimeError) << "cpu-object payload: bad relocation entry size";
    size_t n = rela.sh_size / sizeof(Elf64_Rela);
    const Elf64_Rela* entries = elf_.at<Elf64_Rela>(rela.sh_offset, n);
    for (size_t i = 0; i < n; ++i) apply(entries[i], target);
}

std::map<std::string, void*> Linker::global_functions() {
    std::map<std::string, void*> functions;
    const Elf64_Sym* syms = elf_.at<Elf64_Sym>(symtab_->sh_offset, num_symbols_);
    for (uint32_t i = 0; i < num_symbols_; ++i) {
        const Elf64_Sym& s = syms[i];
        if (ELF64_ST_BIND(s.st_info) != STB_GLOBAL || ELF64_ST_TYPE(s.st_info) != STT_FUNC ||
            s.st_shndx == SHN_UNDEF)
            continue;
        functions[elf_.string_at(*strtab_, s.st_name)] = reinterpret_cast<void*>(symbol_address(i));
    }
    return functions;
}

std::shared_ptr<const LoadedCode> Linker::link() {
    read_headers();
    plan_layout();
    copy_sections();
    try {
        for (const Section& s : sections_)
            if (s.header->sh_type == SHT_RELA) relocate(*s.header);
        std::map<std::string, void*> functions = global_functions();
        if (mprotect(base_, data_offset_, PROT_READ | PROT_EXEC) != 0)
            TESSEL_THROW(RuntimeError) << "cpu-object payload: cannot make the code executable";
        auto code = std::make_shared<const ObjectCode>(base_, total_, std::move(functions));
        base_ = nullptr;
        return code;
    } catch (...) {
        munmap(base_, total_);
        throw;
    }
}

}  // namespace

bool cpu_object_loader_supported() {
#if defined(__x86_64__) && defined(__linux__)
    return true;
#else
    return false;
#endif
}

std::shared_ptr<const LoadedCode> load_cpu_object(const std::vector<uint8_t>& object) {
    return Linker(object).link();
}

PayloadLoader cpu_object_payload_loader() {
    return [](const std::vector<uint8_t>& payload) { return load_cpu_object(payload); };
}

}  // namespace tessel::internal
