/* <rdl.hpp>: the standard wrappers with each lock type, timeouts,
 * exceptions and error codes, the named requirements (checked at compile
 * time), moves, and lost holds under std::unique_lock and when memory runs
 * out (this program replaces operator new, which fails on demand).
 *
 * cmocka leaves a failing test with a longjmp, which must not cross C++
 * frames with live objects. So the bodies check with CHECK(), which
 * throws; run() starts the server (which may skip the test) before any
 * C++ object exists, catches what the body throws, and fails the test
 * from a frame that holds nothing. "Held elsewhere" is a second client:
 * in Redis its owners are other owners, as another process's would be. */
#include <rdl.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "rdlt.h"

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

/* ---- the named requirements, at compile time ------------------------------- */

namespace
{

template <class T, class = void> struct basic_lockable : std::false_type {
};
template <class T>
struct basic_lockable<T, std::void_t<decltype(std::declval<T &>().lock()),
                                     decltype(std::declval<T &>().unlock())>>
    : std::true_type {
};

template <class T, class = void> struct lockable : std::false_type {
};
template <class T>
struct lockable<
    T, std::enable_if_t<basic_lockable<T>::value &&
                        std::is_convertible_v<
                            decltype(std::declval<T &>().try_lock()), bool>>>
    : std::true_type {
};

template <class T, class = void> struct timed_lockable : std::false_type {
};
template <class T>
struct timed_lockable<
    T, std::enable_if_t<
           lockable<T>::value &&
           std::is_convertible_v<decltype(std::declval<T &>().try_lock_for(
                                     std::chrono::nanoseconds(1))),
                                 bool> &&
           std::is_convertible_v<decltype(std::declval<T &>().try_lock_until(
                                     steady_clock::now())),
                                 bool> &&
           std::is_convertible_v<decltype(std::declval<T &>().try_lock_until(
                                     std::chrono::system_clock::now())),
                                 bool>>> : std::true_type {
};

template <class T, class = void>
struct shared_timed_lockable : std::false_type {
};
template <class T>
struct shared_timed_lockable<
    T, std::enable_if_t<
           std::is_void_v<decltype(std::declval<T &>().lock_shared())> &&
           std::is_void_v<decltype(std::declval<T &>().unlock_shared())> &&
           std::is_convertible_v<
               decltype(std::declval<T &>().try_lock_shared()), bool> &&
           std::is_convertible_v<
               decltype(std::declval<T &>().try_lock_shared_for(1ms)), bool> &&
           std::is_convertible_v<
               decltype(std::declval<T &>().try_lock_shared_until(
                   steady_clock::now())),
               bool>>> : std::true_type {
};

/* The detectors themselves, on the standard's own types. */
static_assert(timed_lockable<std::timed_mutex>::value);
static_assert(!timed_lockable<std::mutex>::value);
static_assert(shared_timed_lockable<std::shared_timed_mutex>::value);

static_assert(timed_lockable<rdl::mutex>::value);
static_assert(timed_lockable<rdl::fair_mutex>::value);
static_assert(timed_lockable<rdl::shared_mutex>::value);
static_assert(shared_timed_lockable<rdl::shared_mutex>::value);
static_assert(timed_lockable<rdl::multi_lock>::value);
static_assert(timed_lockable<rdl::counting_semaphore>::value);
static_assert(!shared_timed_lockable<rdl::mutex>::value);
static_assert(!shared_timed_lockable<rdl::multi_lock>::value);

/* unlock() never throws: the standard's wrappers call it in destructors. */
static_assert(noexcept(std::declval<rdl::mutex &>().unlock()));
static_assert(noexcept(std::declval<rdl::fair_mutex &>().unlock()));
static_assert(noexcept(std::declval<rdl::shared_mutex &>().unlock()));
static_assert(noexcept(std::declval<rdl::shared_mutex &>().unlock_shared()));
static_assert(noexcept(std::declval<rdl::multi_lock &>().unlock()));
static_assert(noexcept(std::declval<rdl::mutex &>().unlock_as(1)));
/* The error-code overloads do not throw either. */
static_assert(noexcept(
    std::declval<rdl::mutex &>().lock(std::declval<std::error_code &>())));
static_assert(noexcept(std::declval<rdl::mutex &>().try_lock_for(
    std::declval<milliseconds>(), std::declval<std::error_code &>())));
static_assert(noexcept(
    std::declval<rdl::client &>().connect(std::declval<std::error_code &>())));

/* Move-only, and nothrow moves (std::vector moves rather than copies). */
template <class T>
constexpr bool move_only =
    std::is_nothrow_move_constructible_v<T>
        &&std::is_nothrow_move_assignable_v<T> &&
    !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T>;
static_assert(move_only<rdl::client>);
static_assert(move_only<rdl::mutex>);
static_assert(move_only<rdl::fair_mutex>);
static_assert(move_only<rdl::shared_mutex>);
static_assert(move_only<rdl::multi_lock>);
static_assert(move_only<rdl::counting_semaphore>);
static_assert(noexcept(std::declval<rdl::counting_semaphore &>().release()));
static_assert(rdl::counting_semaphore::max() == RDL_SEMAPHORE_MAX_PERMITS);
/* A URL alone does not make a client by accident. */
static_assert(!std::is_convertible_v<const char *, rdl::client>);

static_assert(std::is_base_of_v<std::system_error, rdl::error>);
static_assert(std::is_error_code_enum_v<rdl_errno_t>);

/* ---- harness ----------------------------------------------------------------- */

struct check_failed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string where(const char *file, int line, const char *what)
{
    return std::string(file) + ":" + std::to_string(line) + ": " + what;
}

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            throw check_failed(where(__FILE__, __LINE__, #cond));              \
    } while (0)

/* Runs stmt, which must throw rdl::error with code `want`; evaluates to
 * the caught error's what(). */
#define CHECK_THROWS(stmt, want)                                               \
    do {                                                                       \
        bool thrown_ = false;                                                  \
        try {                                                                  \
            stmt;                                                              \
        } catch (const rdl::error &e_) {                                       \
            thrown_ = true;                                                    \
            if (e_.code() != (want))                                           \
                throw check_failed(where(__FILE__, __LINE__, e_.what()));      \
        }                                                                      \
        if (!thrown_)                                                          \
            throw check_failed(where(__FILE__, __LINE__, "no throw: " #stmt)); \
    } while (0)

/* The body's exception, copied out before any longjmp. */
bool run_body(void (*body)(rdlt_server *), rdlt_server *s, char *msg,
              size_t len) noexcept
{
    try {
        body(s);
        return true;
    } catch (const std::exception &e) {
        std::snprintf(msg, len, "%s", e.what());
    } catch (...) {
        std::snprintf(msg, len, "unknown exception");
    }
    return false;
}

void run(void (*body)(rdlt_server *), bool server = true)
{
    char msg[1024];
    rdlt_server *s = server ? rdlt_server_start() : nullptr;
    if (!run_body(body, s, msg, sizeof(msg))) {
        print_error("ERROR: %s\n", msg);
        fail();
    }
}

/* A connected client with short timeouts. */
rdl::client connected(rdlt_server *s, rdl::options opts = {})
{
    if (!opts.timeouts)
        opts.timeouts = rdl::timeouts{2000ms, 1000ms};
    return rdl::client(rdlt_server_url(s), opts);
}

long long elapsed_ms(steady_clock::time_point since)
{
    return static_cast<long long>(
        std::chrono::duration_cast<milliseconds>(steady_clock::now() - since)
            .count());
}

/* Waits until flag is set (at most timeout). */
bool wait_for(const std::atomic<int> &flag, milliseconds timeout)
{
    const auto end = steady_clock::now() + timeout;
    while (flag.load() == 0 && steady_clock::now() < end)
        std::this_thread::sleep_for(10ms);
    return flag.load() != 0;
}

} // namespace

/* ---- errors ------------------------------------------------------------------ */

/* Every code of the list, as the X-macro gives them: its message is the C
 * library's, it compares equal to its enumerator, and rdl::error carries
 * it. A code added to the list is checked here with no change. */
static void cpp_error_category_body(rdlt_server *)
{
    struct code {
        int value;
        const char *name;
    };
    static const code codes[] = {
#define CODE_(name, value, msg) {value, "RDL_" #name},
        RDL_ERRNO_MAP(CODE_)
#undef CODE_
    };
    CHECK(std::string(rdl::category().name()) == "rdl");
    for (const code &c : codes) {
        const std::error_code ec(c.value, rdl::category());
        CHECK(ec.message() == rdl_strerror(c.value));
        CHECK(ec.message() != rdl_strerror(1)); /* not "unknown error" */
        CHECK(std::string(rdl_err_name(c.value)) == c.name);
        CHECK(ec == static_cast<rdl_errno_t>(c.value));
        CHECK(ec != std::error_code(c.value, std::generic_category()));
        const rdl::error e(c.value, "call");
        CHECK(e.code() == ec);
        CHECK(std::string(e.what()).find(rdl_strerror(c.value)) !=
              std::string::npos);
    }
    CHECK(rdl::category().message(0) == rdl_strerror(0));
    /* Portable conditions for the codes that have one; none for the
     * others. */
    const std::error_code timedout = RDL_ETIMEDOUT, lost = RDL_ELOST;
    CHECK(timedout == std::errc::timed_out);
    CHECK(std::error_code(RDL_EBUSY) == std::errc::device_or_resource_busy);
    CHECK(std::error_code(RDL_ECONNREFUSED) == std::errc::connection_refused);
    CHECK(lost != std::errc::timed_out);
    CHECK(lost.default_error_condition().category() == rdl::category());
}
static void test_cpp_error_category(void **state)
{
    (void)state;
    run(cpp_error_category_body, false);
}

/* The README's three lines, as written: a client is ready when its
 * constructor returns. */
static void cpp_ready_on_construct_body(rdlt_server *s)
{
    const std::string url = rdlt_server_url(s);
    rdl::client client(url);
    rdl::mutex m(client, "orders:42");
    {
        std::lock_guard<rdl::mutex> g(m);
        CHECK(m.fencing_token() > 0);
    }
    CHECK(m.fencing_token() == 0);

    /* Deferred: configure first; until connect(), lock calls fail with
     * RDL_ENOTCONN (std::errc::not_connected); connecting twice is an
     * error. */
    rdl::client later(url, rdl::defer_connect);
    rdl::mutex early(later, "orders:43");
    std::error_code ec;
    CHECK(!early.try_lock(ec) && ec == RDL_ENOTCONN);
    CHECK(ec == std::errc::not_connected);
    CHECK_THROWS(early.lock(), RDL_ENOTCONN);
    later.connect();
    CHECK(early.try_lock());
    early.unlock();
    CHECK(!early.last_error());
    later.connect(ec);
    CHECK(ec == RDL_EINVAL);
}
static void test_cpp_ready_on_construct(void **state)
{
    (void)state;
    run(cpp_ready_on_construct_body);
}

/* A dead port: the constructor, or connect() after a deferred one,
 * throws rdl::error RDL_ECONNREFUSED naming the call and the address;
 * connect(ec) reports it without throwing. A bad URL or option fails in
 * the constructor, deferred or not. */
static void cpp_connect_refused_body(rdlt_server *s)
{
    rdl::options opts;
    opts.timeouts = rdl::timeouts{500ms, 500ms};
    const std::string url = rdlt_server_url(s);
    rdl::client c(url, opts, rdl::defer_connect);
    rdlt_server_stop(s);
    try {
        rdl::client now(url, opts);
        throw check_failed("a client on a dead port was made");
    } catch (const rdl::error &e) {
        CHECK(e.code() == RDL_ECONNREFUSED);
        CHECK(std::string(e.what()).find("rdl_client_connect") !=
              std::string::npos);
    }
    try {
        c.connect();
        throw check_failed("connect to a dead port returned");
    } catch (const std::system_error &e) {
        CHECK(e.code() == RDL_ECONNREFUSED);
        CHECK(e.code() == std::errc::connection_refused);
        CHECK(std::string(e.what()).find("rdl_client_connect") !=
              std::string::npos);
        CHECK(std::string(e.what()).find("127.0.0.1") != std::string::npos);
    }
    std::error_code ec;
    c.connect(ec);
    CHECK(ec == RDL_ECONNREFUSED);
    CHECK_THROWS(rdl::client bad("nonsense://x"), RDL_EINVAL);
    rdl::options bad_prefix;
    bad_prefix.prefix = "has space";
    CHECK_THROWS(rdl::client bad("redis://127.0.0.1", bad_prefix), RDL_EINVAL);
    /* A WAIT longer than the command timeout would reset its connection. */
    rdl::options slow_wait = opts;
    slow_wait.durability = rdl::durability{1, 5000ms};
    CHECK_THROWS(rdl::client bad("redis://127.0.0.1", slow_wait), RDL_EINVAL);
    rdl::options durable = opts;
    durable.durability = rdl::durability{rdl::durability::all_replicas, 100ms};
    rdl::client ok("redis://127.0.0.1", durable, rdl::defer_connect);
    rdl::options no_level = opts;
    no_level.durability = rdl::durability{1, 100ms, 7};
    CHECK_THROWS(rdl::client bad("redis://127.0.0.1", no_level), RDL_EINVAL);
    rdl::options fsynced = opts;
    fsynced.durability = rdl::durability{1, 100ms, RDL_DURABLE_FSYNCED};
    rdl::client ok_level("redis://127.0.0.1", fsynced, rdl::defer_connect);
}
static void test_cpp_connect_refused(void **state)
{
    (void)state;
    run(cpp_connect_refused_body);
}

/* Errors of lock calls: the throwing form throws, the error-code form
 * reports the same code and does not; an upgrade is RDL_EDEADLK; a
 * fixed lease of zero is RDL_EINVAL; a dead server is an error, not a
 * "not acquired". */
static void cpp_lock_errors_body(rdlt_server *s)
{
    rdl::client c =
        connected(s, rdl::options{rdl::timeouts{500ms, 300ms}, {}, {}, {}, {}});
    rdl::shared_mutex rw(c, "cpp:errors:rw");
    std::error_code ec;
    {
        std::shared_lock<rdl::shared_mutex> reading(rw);
        CHECK_THROWS(rw.lock(), RDL_EDEADLK);
        CHECK(!rw.try_lock_for(100ms, ec));
        CHECK(ec == RDL_EDEADLK);
        CHECK(ec == std::errc::resource_deadlock_would_occur);
    }
    rdl::mutex zero(c, "cpp:errors:zero", milliseconds(0));
    CHECK_THROWS(zero.lock(), RDL_EINVAL);
    zero.lock(ec);
    CHECK(ec == RDL_EINVAL);

    rdl::mutex m(c, "cpp:errors:down");
    rdlt_server_stop(s);
    const auto start = steady_clock::now();
    CHECK(!m.try_lock_for(200ms, ec));
    CHECK(ec);
    CHECK(ec.category() == rdl::category());
    CHECK(elapsed_ms(start) < 5000);
    bool thrown = false;
    try {
        (void)m.try_lock();
    } catch (const rdl::error &e) {
        thrown = e.code().category() == rdl::category();
    }
    CHECK(thrown);
}
static void test_cpp_lock_errors(void **state)
{
    (void)state;
    run(cpp_lock_errors_body);
}

/* ---- the standard wrappers ----------------------------------------------------- */

/* std::lock_guard: held (a token, a validity) inside, free after;
 * re-entry by the same thread; another client's try_lock fails inside. */
static void cpp_lock_guard_body(rdlt_server *s)
{
    rdl::client c = connected(s), other = connected(s);
    rdl::mutex m(c, "cpp:guard"), elsewhere(other, "cpp:guard");
    CHECK(m.name() == "cpp:guard");
    std::uint64_t token;
    {
        std::lock_guard<rdl::mutex> guard(m);
        token = m.fencing_token();
        CHECK(token > 0);
        CHECK(m.valid_for() > 1000ms);
        CHECK(!elsewhere.try_lock());
        {
            std::lock_guard<rdl::mutex> again(m); /* reentrant */
            CHECK(m.fencing_token() == token);
        }
        CHECK(!elsewhere.try_lock());
    }
    CHECK(!m.last_error());
    CHECK(m.fencing_token() == 0);
    CHECK(m.valid_for() == 0ms);
    CHECK(elsewhere.try_lock());
    CHECK(elsewhere.fencing_token() > token);
    elsewhere.unlock();
    CHECK(!elsewhere.last_error());
}
static void test_cpp_lock_guard(void **state)
{
    (void)state;
    run(cpp_lock_guard_body);
}

/* std::unique_lock with try_to_lock, defer_lock, a duration and a time
 * point of two clocks, on rdl::mutex and rdl::fair_mutex. */
template <class Mutex> void unique_lock_cases(rdl::client &c, rdl::client &o)
{
    Mutex m(c, "cpp:unique"), elsewhere(o, "cpp:unique");
    {
        std::unique_lock<Mutex> held(elsewhere);
        std::unique_lock<Mutex> a(m, std::try_to_lock);
        CHECK(!a.owns_lock());
        auto start = steady_clock::now();
        std::unique_lock<Mutex> b(m, 200ms);
        CHECK(!b.owns_lock());
        CHECK(elapsed_ms(start) >= 190); /* timers tick in ms */
        CHECK(elapsed_ms(start) < 2000);
        start = steady_clock::now();
        std::unique_lock<Mutex> d(m, steady_clock::now() + 150ms);
        CHECK(!d.owns_lock());
        CHECK(elapsed_ms(start) >= 140);
        std::unique_lock<Mutex> e(m, std::chrono::system_clock::now() + 50ms);
        CHECK(!e.owns_lock());
    }
    std::unique_lock<Mutex> a(m, std::try_to_lock);
    CHECK(a.owns_lock());
    a.unlock();
    std::unique_lock<Mutex> b(m, std::defer_lock);
    CHECK(!b.owns_lock());
    b.lock();
    CHECK(b.owns_lock());
    CHECK(m.fencing_token() > 0);
    b.unlock();
    std::unique_lock<Mutex> d(m, 1s);
    CHECK(d.owns_lock());
}
static void cpp_unique_lock_body(rdlt_server *s)
{
    rdl::client c = connected(s), o = connected(s);
    unique_lock_cases<rdl::mutex>(c, o);
    unique_lock_cases<rdl::fair_mutex>(c, o);
}
static void test_cpp_unique_lock(void **state)
{
    (void)state;
    run(cpp_unique_lock_body);
}

/* try_lock_for: false, in time, while another client holds the lock (the
 * error-code form too, with the code clear: a timeout is no error); true
 * as soon as the holder lets go, well before the budget. */
static void cpp_timeouts_body(rdlt_server *s)
{
    rdl::client c = connected(s), o = connected(s);
    rdl::mutex m(c, "cpp:timeouts"), elsewhere(o, "cpp:timeouts");
    static constexpr rdl::owner_t holder = 1; /* released by another thread */
    elsewhere.lock_as(holder);
    auto start = steady_clock::now();
    CHECK(!m.try_lock_for(300ms));
    long long took = elapsed_ms(start);
    CHECK(took >= 290 && took < 2000);
    std::error_code ec = RDL_EINVAL;
    CHECK(!m.try_lock_for(100ms, ec));
    CHECK(!ec);
    CHECK(!m.try_lock_until(steady_clock::now() - 1s)); /* one try */
    CHECK(!m.try_lock(ec));
    CHECK(!ec);

    std::thread releaser([&elsewhere] {
        std::this_thread::sleep_for(200ms);
        elsewhere.unlock_as(holder);
    });
    start = steady_clock::now();
    const bool got = m.try_lock_for(10s, ec);
    took = elapsed_ms(start);
    releaser.join();
    CHECK(got);
    CHECK(!ec);
    CHECK(took < 5000);
    CHECK(!elsewhere.last_error());
    m.unlock();
}
static void test_cpp_timeouts(void **state)
{
    (void)state;
    run(cpp_timeouts_body);
}

/* std::shared_lock: readers of two clients share, a writer waits for both;
 * std::unique_lock takes the write side. */
static void cpp_shared_lock_body(rdlt_server *s)
{
    rdl::client c = connected(s), o = connected(s), w = connected(s);
    rdl::shared_mutex rw(c, "cpp:rw"), elsewhere(o, "cpp:rw");
    rdl::shared_mutex writer(w, "cpp:rw");
    {
        std::shared_lock<rdl::shared_mutex> mine(rw);
        std::shared_lock<rdl::shared_mutex> theirs(elsewhere, 1s);
        CHECK(theirs.owns_lock());
        CHECK(rw.shared_fencing_token() > 0);
        CHECK(rw.shared_valid_for() > 0ms);
        CHECK(!writer.try_lock_for(100ms));
    }
    CHECK(writer.try_lock_for(1s)); /* both readers let go */
    writer.unlock();
    {
        std::unique_lock<rdl::shared_mutex> writing(rw);
        CHECK(rw.fencing_token() > 0);
        std::shared_lock<rdl::shared_mutex> reader(elsewhere, 100ms);
        CHECK(!reader.owns_lock());
        CHECK(!elsewhere.try_lock_shared());
        CHECK(!elsewhere.try_lock_shared_until(steady_clock::now() + 50ms));
    }
    std::shared_lock<rdl::shared_mutex> reader(elsewhere, std::try_to_lock);
    CHECK(reader.owns_lock());
    /* A read hold of an explicit owner, released by another thread. */
    static constexpr rdl::owner_t job = 7;
    std::error_code ec = RDL_EINVAL;
    rw.lock_shared_as(job, ec);
    CHECK(!ec);
    CHECK(!writer.try_lock());
    std::thread([&rw, &ec] { rw.unlock_shared_as(job, ec); }).join();
    CHECK(!ec && !rw.last_error());
}
static void test_cpp_shared_lock(void **state)
{
    (void)state;
    run(cpp_shared_lock_body);
}

/* std::scoped_lock and std::lock over two locks (try-and-back-off), and
 * rdl::multi_lock (all or nothing in one canonical order): with one part
 * held elsewhere it times out holding none. */
static void cpp_scoped_lock_body(rdlt_server *s)
{
    rdl::client c = connected(s), o = connected(s);
    rdl::mutex a(c, "cpp:scoped:a"), other_a(o, "cpp:scoped:a");
    rdl::fair_mutex b(c, "cpp:scoped:b"), other_b(o, "cpp:scoped:b");
    {
        std::scoped_lock both(a, b);
        CHECK(a.fencing_token() > 0 && b.fencing_token() > 0);
        CHECK(!other_a.try_lock() && !other_b.try_lock());
    }
    CHECK(other_a.try_lock());
    other_a.unlock();
    {
        std::lock(a, b);
        std::lock_guard<rdl::mutex> ga(a, std::adopt_lock);
        std::lock_guard<rdl::fair_mutex> gb(b, std::adopt_lock);
        CHECK(!other_b.try_lock());
    }

    rdl::multi_lock ml({&a, &b});
    CHECK(std::string(ml.name()) == "cpp:scoped:a+cpp:scoped:b" ||
          std::string(ml.name()) == "cpp:scoped:b+cpp:scoped:a");
    {
        std::lock_guard<rdl::multi_lock> all(ml);
        CHECK(ml.fencing_token() >= a.fencing_token());
        CHECK(a.fencing_token() > 0 && b.fencing_token() > 0);
        CHECK(!other_a.try_lock() && !other_b.try_lock());
    }
    CHECK(!ml.last_error());
    std::unique_lock<rdl::fair_mutex> theirs(other_b);
    {
        std::unique_lock<rdl::multi_lock> all(ml, 200ms);
        CHECK(!all.owns_lock());
    }
    CHECK(a.fencing_token() == 0);
    CHECK(other_a.try_lock()); /* the multi_lock left nothing held */
    other_a.unlock();
    theirs.unlock();
    std::unique_lock<rdl::multi_lock> all(ml, 1s);
    CHECK(all.owns_lock());
}
static void test_cpp_scoped_lock(void **state)
{
    (void)state;
    run(cpp_scoped_lock_body);
}

/* ---- moves, owners ------------------------------------------------------------- */

/* Moving a client keeps its locks working; moving a held mutex moves the
 * hold's handle; a moved-from lock fails with RDL_EINVAL, even unlock()
 * (recorded, not thrown); locks live in a std::vector. */
static void cpp_move_body(rdlt_server *s)
{
    rdl::client first = connected(s);
    rdl_client_t *raw = first.get();
    rdl::client c(std::move(first));
    CHECK(first.get() == nullptr);
    CHECK(c.get() == raw);
    CHECK(c.id().size() == 32);

    rdl::mutex m(c, "cpp:move");
    m.lock();
    const std::uint64_t token = m.fencing_token();
    rdl::mutex moved(std::move(m));
    CHECK(moved.fencing_token() == token);
    CHECK(m.native_handle() == nullptr);
    CHECK_THROWS(m.lock(), RDL_EINVAL);
    m.unlock();
    CHECK(m.last_error() == RDL_EINVAL);
    moved.unlock();
    CHECK(!moved.last_error());

    rdl::mutex assigned(c, "cpp:move:other");
    assigned = std::move(moved);
    CHECK(assigned.name() == "cpp:move");
    std::vector<rdl::mutex> many;
    for (int i = 0; i < 4; i++)
        many.emplace_back(c, "cpp:move:" + std::to_string(i));
    for (rdl::mutex &x : many)
        x.lock();
    for (rdl::mutex &x : many) {
        CHECK(x.fencing_token() > 0);
        x.unlock();
    }
    rdl::multi_lock ml({&many[0], &many[1]}, 5s);
    rdl::multi_lock ml2(std::move(ml));
    std::lock_guard<rdl::multi_lock> guard(ml2);
    CHECK(ml2.valid_for() > 1000ms && ml2.valid_for() <= 5000ms);

    /* Declared last, so destroyed first: no lock is made from it. */
    rdl::client spare = connected(s), taker(std::move(spare));
    CHECK_THROWS(rdl::mutex fromgone(spare, "x"), RDL_EINVAL);
}
static void test_cpp_move(void **state)
{
    (void)state;
    run(cpp_move_body);
}

/* A hold handed to another thread with an explicit owner; a unique_lock
 * moved to another thread unlocks as that thread, which holds nothing:
 * RDL_ENOTHELD is recorded, nothing is thrown, the hold stays. */
static void cpp_handoff_body(rdlt_server *s)
{
    rdl::client c = connected(s), o = connected(s);
    rdl::mutex m(c, "cpp:handoff"), elsewhere(o, "cpp:handoff");
    static constexpr rdl::owner_t job = 42;
    m.lock_as(job);
    CHECK(m.fencing_token(job) > 0);
    CHECK(m.fencing_token() == 0); /* this thread is another owner */
    std::error_code ec = RDL_EINVAL;
    std::thread([&m, &ec] { m.unlock_as(job, ec); }).join();
    CHECK(!ec);
    CHECK(elsewhere.try_lock());
    elsewhere.unlock();

    std::unique_lock<rdl::mutex> held(m);
    std::thread([moved = std::move(held)]() mutable { moved.unlock(); }).join();
    CHECK(m.last_error() == RDL_ENOTHELD);
    CHECK(!elsewhere.try_lock());
    m.unlock();
    CHECK(!m.last_error());
}
static void test_cpp_handoff(void **state)
{
    (void)state;
    run(cpp_handoff_body);
}

/* ---- lost holds ------------------------------------------------------------------ */

struct lost_log {
    std::atomic<int> count{0};
    std::atomic<int> reason{0};
    std::atomic<rdl::owner_t> owner{0};

    rdl::lost_callback callback()
    {
        return [this](std::error_code ec, rdl::owner_t who) {
            reason.store(ec.value());
            owner.store(who);
            count.fetch_add(1);
        };
    }

    /* The same, too large for std::function's inline buffer (16 bytes in
     * libstdc++, 24 in libc++): a copy of it allocates. */
    rdl::lost_callback big_callback()
    {
        std::array<char, 64> pad{};
        return [this, pad](std::error_code ec, rdl::owner_t who) {
            reason.store(ec.value() + pad[0]);
            owner.store(who);
            count.fetch_add(1);
        };
    }
};

/* A fixed lease runs out under a std::unique_lock: the release at the end
 * of the scope does not throw, records RDL_ELOST and reports it. */
static void cpp_lost_fixed_lease_body(rdlt_server *s)
{
    rdl::client c = connected(s), o = connected(s);
    rdl::mutex m(c, "cpp:lost:fixed", 200ms), elsewhere(o, "cpp:lost:fixed");
    lost_log log;
    m.on_lost(log.callback());
    {
        std::unique_lock<rdl::mutex> held(m);
        CHECK(m.valid_for() <= 200ms);
        std::this_thread::sleep_for(400ms);
        CHECK(m.valid_for() == 0ms);
        CHECK(elsewhere.try_lock()); /* the lease really ended */
    }
    CHECK(m.last_error() == RDL_ELOST);
    CHECK(log.count.load() == 1);
    CHECK(log.reason.load() == RDL_ELOST);
    CHECK(log.owner.load() == rdl::this_thread_owner());
    elsewhere.unlock();
    std::error_code ec;
    m.lock(ec); /* the lock object is usable again */
    CHECK(!ec);
    m.unlock(ec);
    CHECK(!ec && !m.last_error());
}
static void test_cpp_lost_fixed_lease(void **state)
{
    (void)state;
    run(cpp_lost_fixed_lease_body);
}

/* An auto-renewed hold whose key is deleted: the watchdog's next renewal
 * finds it gone and the callback runs once, on the loop thread; the
 * unique_lock's release then records RDL_ELOST without a second report. */
static void cpp_lost_auto_renew_body(rdlt_server *s)
{
    rdl::options opts;
    opts.watchdog_lease = 300ms;
    rdl::client c = connected(s, opts);
    rdl::mutex m(c, "cpp:lost:auto", rdl::lease::auto_renew);
    lost_log log;
    m.on_lost(log.callback());
    {
        std::unique_lock<rdl::mutex> held(m);
        freeReplyObject(rdlt_cmd(s, "DEL rdl:lock:{cpp:lost:auto}"));
        CHECK(wait_for(log.count, 2000ms));
        CHECK(log.reason.load() == RDL_ELOST);
        CHECK(log.owner.load() == rdl::this_thread_owner());
        CHECK(m.last_error() == RDL_ELOST);
        CHECK(m.valid_for() == 0ms);
    }
    CHECK(m.last_error() == RDL_ELOST);
    std::this_thread::sleep_for(300ms);
    CHECK(log.count.load() == 1);
    /* Cleared: no callback for the next loss. */
    m.on_lost({});
    std::lock_guard<rdl::mutex> again(m);
    CHECK(m.fencing_token() > 0);
}
static void test_cpp_lost_auto_renew(void **state)
{
    (void)state;
    run(cpp_lost_auto_renew_body);
}

/* ---- lost holds, out of memory --------------------------------------------- */

/* operator new, replaced for this program: while fail_new is set it fails
 * with std::bad_alloc, on every thread, as it would when memory runs out.
 * (The C library allocates with malloc: only C++ code sees it.) */
static std::atomic<bool> fail_new{false};

void *operator new(std::size_t n)
{
    void *p = nullptr;
    if (!fail_new.load())
        p = std::malloc(n != 0 ? n : 1);
    if (p == nullptr)
        throw std::bad_alloc();
    return p;
}
void operator delete(void *p) noexcept
{
    std::free(p);
}
void operator delete(void *p, std::size_t) noexcept
{
    std::free(p);
}

/* A release reports a loss while memory is out: the report runs inside
 * unlock(), noexcept, so a std::bad_alloc there would end the program
 * (it copied the callback, a std::function too large to copy without
 * allocating). The callback runs, once, and the program goes on. */
static void cpp_lost_release_without_memory_body(rdlt_server *s)
{
    rdl::client c = connected(s);
    rdl::mutex m(c, "cpp:lost:nomem", 200ms);
    lost_log log;
    m.on_lost(log.big_callback());
    m.lock();
    std::this_thread::sleep_for(400ms); /* the lease runs out */
    fail_new.store(true);
    m.unlock();
    fail_new.store(false);
    CHECK(log.count.load() == 1);
    CHECK(log.reason.load() == RDL_ELOST);
    CHECK(m.last_error() == RDL_ELOST);
}
static void test_cpp_lost_release_without_memory(void **state)
{
    (void)state;
    run(cpp_lost_release_without_memory_body);
}

/* The watchdog reports a loss while memory is out: the report runs in the
 * C lost callback, on the loop thread, where a std::bad_alloc would end
 * the program (it recorded the owner in a vector that had to grow). The
 * callback runs once, and the release that follows, which fails with
 * RDL_ELOST, does not report the loss again. */
static void cpp_lost_watchdog_without_memory_body(rdlt_server *s)
{
    rdl::options opts;
    opts.watchdog_lease = 300ms;
    rdl::client c = connected(s, opts);
    rdl::mutex m(c, "cpp:lost:nomem:auto", rdl::lease::auto_renew);
    lost_log log;
    m.on_lost(log.big_callback());
    m.lock();
    fail_new.store(true);
    freeReplyObject(rdlt_cmd(s, "DEL rdl:lock:{cpp:lost:nomem:auto}"));
    const bool reported = wait_for(log.count, 2000ms);
    fail_new.store(false);
    CHECK(reported);
    CHECK(log.reason.load() == RDL_ELOST);
    m.unlock();
    CHECK(m.last_error() == RDL_ELOST);
    std::this_thread::sleep_for(300ms);
    CHECK(log.count.load() == 1);
}
static void test_cpp_lost_watchdog_without_memory(void **state)
{
    (void)state;
    run(cpp_lost_watchdog_without_memory_body);
}

/* rdl::counting_semaphore: at most `permits` holders across clients,
 * std::counting_semaphore's calls, std::lock_guard for one permit, the
 * stored total, release of several, errors. */
static void cpp_semaphore_body(rdlt_server *s)
{
    rdl::client c = connected(s), o = connected(s);
    rdl::counting_semaphore sem(c, "cpp:sem", 2), elsewhere(o, "cpp:sem", 5);
    sem.acquire();
    CHECK(sem.try_acquire()); /* the same thread holds two */
    CHECK(sem.fencing_token() > 0);
    CHECK(!elsewhere.try_acquire()); /* the stored total, 2, is in force */
    CHECK(!elsewhere.try_acquire_for(100ms));
    CHECK(!elsewhere.try_acquire_until(steady_clock::now() + 50ms));
    sem.release(2);
    CHECK(!sem.last_error());
    {
        std::lock_guard<rdl::counting_semaphore> one(elsewhere);
        CHECK(sem.try_acquire_for(1s));
        CHECK(!sem.try_acquire()); /* 2 of 2 */
        sem.release();
    }
    sem.release(); /* holds none: recorded, not thrown */
    CHECK(sem.last_error() == std::error_code(RDL_ENOTHELD, rdl::category()));
    std::error_code ec;
    sem.release(1, ec);
    CHECK(ec.value() == RDL_ENOTHELD);
    sem.set_permits(3);
    CHECK(sem.try_acquire() && elsewhere.try_acquire() &&
          elsewhere.try_acquire());
    CHECK(!sem.try_acquire());
    sem.release();
    elsewhere.release(2);
    bool threw = false;
    try {
        rdl::counting_semaphore zero(c, "cpp:sem0", 0);
    } catch (const rdl::error &e) {
        threw = e.code().value() == RDL_EINVAL;
    }
    CHECK(threw);
}
static void test_cpp_semaphore(void **state)
{
    (void)state;
    run(cpp_semaphore_body);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_cpp_error_category),
    RDLT_TEST(test_cpp_connect_refused),
    RDLT_TEST(test_cpp_ready_on_construct),
    RDLT_TEST(test_cpp_lock_errors),
    RDLT_TEST(test_cpp_lock_guard),
    RDLT_TEST(test_cpp_unique_lock),
    RDLT_TEST(test_cpp_timeouts),
    RDLT_TEST(test_cpp_shared_lock),
    RDLT_TEST(test_cpp_semaphore),
    RDLT_TEST(test_cpp_scoped_lock),
    RDLT_TEST(test_cpp_move),
    RDLT_TEST(test_cpp_handoff),
    RDLT_TEST(test_cpp_lost_fixed_lease),
    RDLT_TEST(test_cpp_lost_auto_renew),
    RDLT_TEST(test_cpp_lost_release_without_memory),
    RDLT_TEST(test_cpp_lost_watchdog_without_memory),
};

RDLT_MAIN(tests)
