// mfppr: the value probes of a test instrumented to localise a wrong value (src/evidence/values).
// Each probed call logs its value and the values the spec's other MRs of its family compute at
// the same operands; at the first check that compares two results, the values made so far are
// kept, and compared only if the run then fails (a check's abort, a signal, an uncaught
// exception): a run that passes (the reference run) or one with knocked-out values compares
// nothing. Two values are the same as the spec says: by the test's checks that compare two
// results (the oracle's own comparisons), each run in a child process bounded in time, so that
// a failing comparison is recorded and the run goes on; a check that does not hold for a value
// against itself cannot compare it. Identical printed forms are a shortcut; values of a type no
// check compares are compared by their printed forms, and the log says so. Every line goes to
// the log named below, led by the process id.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>
#include <cxxabi.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mfppr_value {
inline bool& in_child() { static bool child = false; return child; }
inline int log_fd() {
    static int fd = ::open(MFPPR_VALUE_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    return fd;
}
inline void say(const std::string& line) {
    if (in_child() || log_fd() < 0) return;
    std::string l = std::to_string(::getpid()) + " " + line + "\n";
    ssize_t n = ::write(log_fd(), l.data(), l.size());
    (void)n;
}
inline int& next_seq() { static int seq = 0; return seq; }

template <class T, class = void> struct printable : std::false_type {};
template <class T>
struct printable<T, decltype(void(std::declval<std::ostream&>() << std::declval<const T&>()))>
    : std::true_type {};
// A library type without `<<` that prints itself (isl's C++ classes: `to_str()`).
template <class T, class = void> struct self_printing : std::false_type {};
template <class T>
struct self_printing<T, decltype(void(std::string(std::declval<const T&>().to_str())))>
    : std::true_type {};
// The value as the library prints it, whole; "?" when it cannot print it.
template <class T> std::string printed(const T& v) {
    if constexpr (printable<T>::value) {
        std::ostringstream out;
        out << v;
        return out.str();
    } else if constexpr (self_printing<T>::value) {
        return v.to_str();
    } else {
        return "?";
    }
}
// The value printed on one line of the log, cut at 200 characters.
template <class T> std::string shown(const T& v) {
    std::string s = printed(v);
    for (char& c : s) if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (s.size() > 200) s = s.substr(0, 200) + "...";
    return s;
}

template <class T> struct Record { int seq; int site; std::vector<T> values; std::vector<int> from; };
// Every type whose values were kept, by the function that compares them by their printed forms.
inline std::vector<void (*)()>& kept_types() { static std::vector<void (*)()> t; return t; }
template <class T> void compare_printed();
template <class T> std::vector<Record<T>>& store() {
    static std::vector<Record<T>> s = [] {
        kept_types().push_back(&compare_printed<T>);
        return std::vector<Record<T>>{};
    }();
    return s;
}

inline void enter(int site) { say("enter " + std::to_string(site)); }
inline void leave(int site) { say("leave " + std::to_string(site)); }

// The records whose value is replaced by another way's (a value knockout: does the failure
// still come without this wrong value?): the pairs `record way` of the knockout's own text
// (`#define MFPPR_VALUE_FIXES "record way"`; none: no knockout). A bundled check that reuses one
// build for every knockout passes the text's pairs in the environment instead (set, even empty,
// it wins over the build's define).
inline const std::vector<std::pair<int, int>>& fixes() {
    static const std::vector<std::pair<int, int>> f = [] {
        std::vector<std::pair<int, int>> out;
        const char* text = std::getenv("MFPPR_VALUE_FIXES");
#ifdef MFPPR_VALUE_FIXES
        if (!text) text = MFPPR_VALUE_FIXES;
#endif
        int seq = 0, way = 0, used = 0;
        while (text && std::sscanf(text, "%d %d%n", &seq, &way, &used) == 2) {
            out.emplace_back(seq, way);
            text += used;
        }
        return out;
    }();
    return f;
}

// Keeps the call's value and the other ways' values; returns the call's value, or the other
// way's where the record is knocked out.
template <class T, class Ops, class... Alt>
T keep(int site, const T& value, const Ops& operands, Alt&&... alt) {
    Record<T> r{next_seq()++, site, {value}, {0}};
    std::apply([&](const auto&... o) {
        int k = 0;
        auto one = [&](const auto& x) {
            std::string text = shown(x);
            if (text != "?")
                say("operand " + std::to_string(r.seq) + " " + std::to_string(k) + " " + text);
            ++k;
        };
        (one(o), ...);
    }, operands);
    int k = 0;
    auto one = [&](auto&& f) {
        ++k;
        try {
            r.values.push_back(T(f()));
            r.from.push_back(k);
        } catch (...) {
            say("threw " + std::to_string(r.seq) + " " + std::to_string(k));
        }
    };
    (one(alt), ...);
    say("record " + std::to_string(r.seq) + " " + std::to_string(site));
    T out = value;
    for (const auto& f : fixes())
        for (size_t i = 0; i < r.from.size(); ++i)
            if (f.first == r.seq && f.second == r.from[i] && i > 0) {
                out = r.values[i];
                r.values[0] = r.values[i];
                say("fixed " + std::to_string(r.seq) + " " + std::to_string(f.second));
            }
    store<T>().push_back(std::move(r));
    return out;
}

// 1: the check holds, 0: it fails, 2: it could not tell (no process, it threw, or 10 s passed).
inline int same_by(const std::function<void()>& check) {
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        in_child() = true;
        int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) { ::dup2(null, 1); ::dup2(null, 2); }
        ::alarm(10);
        // A check that throws could not compare these values (a Z3 check given terms of
        // another sort, which share the C++ type): it tells nothing.
        try {
            check();
        } catch (...) {
            ::_exit(3);
        }
        std::fflush(nullptr);
        ::_exit(0);
    }
    int status = 0;
    if (::waitpid(pid, &status, 0) < 0) return 2;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return 2;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return 2;
    return 0;
}

// One of the test's checks that compare two results, on two values (throws nothing it can see).
template <class T> using Check = std::function<void(const T&, const T&)>;

// Whether check `c` holds for `x` against `x` itself: if not, it cannot compare `x` (a Z3 check
// that asserts an arithmetic sort, given a Boolean term of the same C++ type).
template <class T> bool applies(const Check<T>& c, const T& x) {
    return same_by([&] { c(x, x); }) == 1;
}

// Whether `x` and `y` are the same value: 1 when they print the same, or when every check
// that can compare both holds in either order (the check is the library's too, and a fault in
// it can depend on its operands' order, so a difference must show both ways); 0 when one fails
// both ways and applies to both (`fits(c)`, see `applies`, asked only then: a check that fails
// for a value against itself cannot compare it); 2 when none could tell.
template <class T>
int same(const T& x, const T& y, const std::vector<Check<T>>& checks,
         const std::function<bool(size_t)>& fits) {
    std::string a = printed(x);
    if (a != "?" && a == printed(y)) return 1;
    bool held = false;
    for (size_t c = 0; c < checks.size(); ++c) {
        int forth = same_by([&] { checks[c](x, y); });
        if (forth == 1) { held = true; continue; }
        int back = same_by([&] { checks[c](y, x); });
        if (back == 1) { held = true; continue; }
        if (forth == 0 && back == 0 && fits(c)) return 0;
    }
    return held ? 1 : 2;
}

// Every pair of values of each record of `records`, logged: `value` lines, then `same seq i j
// s` (by the checks) or `same seq i j s printed` (by the printed forms, when `checks` is
// empty: no check compares values of this type; a value that cannot print tells nothing).
template <class T>
void compare_records(const std::vector<Record<T>>& records, const std::vector<Check<T>>& checks) {
    for (auto& r : records) {
        std::string seq = std::to_string(r.seq);
        for (size_t i = 0; i < r.values.size(); ++i)
            say("value " + seq + " " + std::to_string(r.from[i]) + " " + shown(r.values[i]));
        // Whether each check applies to each value (-1: not asked yet).
        std::vector<std::vector<int>> fit(checks.size(), std::vector<int>(r.values.size(), -1));
        auto fits = [&](size_t c, size_t i) {
            if (fit[c][i] < 0) fit[c][i] = applies(checks[c], r.values[i]) ? 1 : 0;
            return fit[c][i] == 1;
        };
        for (size_t i = 0; i < r.values.size(); ++i)
            for (size_t j = i + 1; j < r.values.size(); ++j) {
                std::string pair = "same " + seq + " " + std::to_string(r.from[i]) + " " +
                                   std::to_string(r.from[j]) + " ";
                if (checks.empty()) {
                    std::string a = printed(r.values[i]), b = printed(r.values[j]);
                    if (a != "?" && b != "?") say(pair + (a == b ? "1" : "0") + " printed");
                    continue;
                }
                auto both = [&](size_t c) { return fits(c, i) && fits(c, j); };
                say(pair + std::to_string(same(r.values[i], r.values[j], checks, both)));
            }
    }
}

// The values of type T kept since the last comparison, compared by their printed forms.
template <class T> void compare_printed() { compare_records<T>(store<T>(), {}); }

// The values kept for a comparison if the run fails (at most one: the first check comparing two
// results keeps them).
struct Deferred {
    virtual void compare() = 0;
    virtual ~Deferred() = default;
};
inline Deferred*& deferred() { static Deferred* d = nullptr; return d; }
// Compare the kept values now, once: the run is failing.
inline void compare_kept() {
    Deferred* d = deferred();
    deferred() = nullptr;
    if (d && !in_child()) d->compare();
}

// The values of type T made so far, taken from the store and kept until the run fails (then
// compared with `checks`, and the values of every other type by their printed forms) or this
// object, a local of the test's function, goes out of scope (the values released before the
// library objects they hang on, such as a Z3 context).
template <class T> struct Later : Deferred {
    std::vector<Check<T>> checks;
    std::vector<Record<T>> records;
    explicit Later(std::vector<Check<T>> c) : checks(std::move(c)), records(std::move(store<T>())) {
        store<T>().clear();
        if (!deferred()) deferred() = this;
        say("kept");
    }
    Later(const Later&) = delete;
    Later& operator=(const Later&) = delete;
    ~Later() override {
        if (deferred() == this) deferred() = nullptr;
    }
    void compare() override {
        if (!fixes().empty()) return;
        compare_records<T>(records, checks);
        for (auto other : kept_types())
            if (other != &compare_printed<T>) other();
        say("compared");
    }
};
template <class T, class... F> Later<T> compare_later(F... checks) {
    return Later<T>(std::vector<Check<T>>{Check<T>(std::move(checks))...});
}

inline void at_check(const char* name) { say(std::string("check ") + name); }

inline std::terminate_handler& previous() { static std::terminate_handler h = nullptr; return h; }
inline void on_terminate() {
    std::string what = "unknown";
    if (std::type_info* t = abi::__cxa_current_exception_type()) {
        int status = 0;
        char* name = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
        what = name ? name : t->name();
        std::free(name);
    }
    say("exception " + what);
    compare_kept();
    if (previous()) previous()();
    std::abort();
}
// The failure is logged first: comparing the kept values after a crash may crash again.
inline void on_signal(int sig) {
    if (!in_child() && log_fd() >= 0) {
        char line[64];
        int n = std::snprintf(line, sizeof line, "%d signal %d\n", (int)::getpid(), sig);
        if (n > 0) { ssize_t w = ::write(log_fd(), line, (size_t)n); (void)w; }
    }
    compare_kept();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}
struct Start {
    Start() {
        say("start");
        previous() = std::set_terminate(on_terminate);
        for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) std::signal(sig, on_signal);
        std::atexit([] { say("exit"); });
    }
};
inline Start start;
} // namespace mfppr_value
