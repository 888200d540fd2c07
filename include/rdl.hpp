/** @file
 * rdl: the C++ layer (C++17, header-only) over the C API of <rdl.h>.
 *
 * @code
 *   rdl::client c("redis://127.0.0.1:6379");  // connected, or throws
 *   rdl::mutex m(c, "orders:42");              // lease: auto-renewed
 *   {
 *       std::unique_lock<rdl::mutex> hold(m, std::chrono::seconds(5));
 *       if (hold)
 *           write_with_fence(m.fencing_token());
 *   }                                          // unlock() never throws
 * @endcode
 *
 * The lock types meet the standard's named requirements, so the standard
 * wrappers work with them: rdl::mutex and rdl::fair_mutex are Lockable and
 * TimedLockable (std::lock_guard, std::unique_lock, std::scoped_lock,
 * std::lock), rdl::shared_mutex also SharedTimedLockable
 * (std::shared_lock), rdl::multi_lock Lockable and TimedLockable.
 *
 * Errors. Failures throw rdl::error, a std::system_error whose code is in
 * rdl::category(); its value is the C code (RDL_E*), and `ec == RDL_EBUSY`
 * compares as expected, since rdl_errno_t is an error code enum. Codes
 * with a standard meaning are also equivalent to std::errc (RDL_ETIMEDOUT
 * to std::errc::timed_out, ...). Each throwing call has an overload taking
 * a std::error_code & that never throws. "Busy" and "timed out" are not
 * errors for the try_ calls: they return false and leave the code clear.
 *
 * unlock() never throws (the standard requires it: wrappers call it from
 * destructors). A failed release (RDL_ELOST: the lease ended or the hold
 * was force-released; RDL_ECONNLOST: unknown outcome; ...) is recorded in
 * last_error() and passed to the on_lost() callback. The client's watchdog
 * reports auto-renewed holds it could not keep the same way, once: the
 * release that follows does not call the callback again.
 *
 * Owners follow the thread: the calls without an owner act as
 * rdl::this_thread_owner() (rdl_owner_self()), as the C blocking API does,
 * so a thread that locks a lock it holds re-enters it. To hand a hold to
 * another thread, take it with an explicit owner, any value both threads
 * agree on, and release it with that owner from the other thread:
 *
 * @code
 *   const rdl::owner_t job = 42;       // or rdl::this_thread_owner()
 *   m.lock_as(job);
 *   std::thread([&m, job] { work(); m.unlock_as(job); }).detach();
 * @endcode
 *
 * A std::unique_lock moved to another thread would unlock as that thread's
 * owner (and fail with RDL_ENOTHELD, recorded in last_error()): use the
 * _as calls for hand-offs.
 *
 * Leases are chosen per lock object: rdl::lease::auto_renew (the default:
 * the watchdog renews the hold until it is released) or a fixed
 * std::chrono::milliseconds lease (the hold ends after that long unless
 * released first).
 *
 * Lifetimes: the client must outlive every lock made from it, and a
 * multi_lock's parts must outlive it (and stay where they are: it keeps
 * pointers to them). Moving an rdl::client or a lock moves its C object;
 * a moved-from object may only be destroyed or assigned to (calls on it
 * fail with RDL_EINVAL). Destroying a lock does not release its holds:
 * they expire by their leases.
 *
 * Thread safety: as the C calls underneath: locks may be shared by
 * threads; no blocking call may be made on the client's loop thread, which
 * is where on_lost() callbacks run (such calls fail with RDL_EDEADLK).
 */
#ifndef RDL_HPP
#define RDL_HPP

#include "rdl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

/* ---- errors ---------------------------------------------------------------- */

/** The C++ layer over the C API: see `<rdl.hpp>`. */
namespace rdl
{

/** The category of rdl's codes: value() is the C code (RDL_E*), message()
 * its rdl_strerror() text. */
class error_category_impl final : public std::error_category
{
  public:
    /** "rdl". */
    const char *name() const noexcept override
    {
        return "rdl";
    }

    /** The message of code `ev`: its rdl_strerror() text. Generated from the
     * one list of codes, so a new code has its message here without a change
     * to this file. */
    std::string message(int ev) const override
    {
        switch (ev) {
#define RDL_HPP_MESSAGE_(name, value, msg)                                     \
    case value:                                                                \
        return msg;
            RDL_ERRNO_MAP(RDL_HPP_MESSAGE_)
#undef RDL_HPP_MESSAGE_
        default:
            return rdl_strerror(ev); /* "success", "unknown error" */
        }
    }

    /** Codes that mean what a std::errc means compare equal to it, so
     * portable code can test `ec == std::errc::timed_out`. */
    std::error_condition default_error_condition(int ev) const noexcept override
    {
        switch (ev) {
        case RDL_EINVAL:
            return std::errc::invalid_argument;
        case RDL_ENOMEM:
            return std::errc::not_enough_memory;
        case RDL_EBUSY:
            return std::errc::device_or_resource_busy;
        case RDL_ETIMEDOUT:
            return std::errc::timed_out;
        case RDL_ECANCELED:
            return std::errc::operation_canceled;
        case RDL_EDEADLK:
            return std::errc::resource_deadlock_would_occur;
        case RDL_ECONNREFUSED:
            return std::errc::connection_refused;
        case RDL_ECONNLOST:
            return std::errc::connection_aborted;
        case RDL_EPROTO:
            return std::errc::protocol_error;
        case RDL_ENOTSUP:
            return std::errc::not_supported;
        case RDL_ENOTCONN:
            return std::errc::not_connected;
        default:
            return std::error_condition(ev, *this);
        }
    }
};

/** The one category object (an inline function's static is one object in
 * the whole program). */
inline const std::error_category &category() noexcept
{
    static const error_category_impl instance;
    return instance;
}

/** What every failing call throws: code() is in rdl::category(), what()
 * names the C call and, when there is one, rdl_client_errmsg()'s detail
 * (the server's text, the node's address). */
class error : public std::system_error
{
  public:
    ///@{
    /** An error of code `ec`, or of C code `code` (RDL_E*) in
     * rdl::category(), with `what` in its what(). */
    explicit error(std::error_code ec) : std::system_error(ec)
    {
    }
    error(std::error_code ec, const std::string &what)
        : std::system_error(ec, what)
    {
    }
    error(int code, const std::string &what)
        : std::system_error(code, category(), what)
    {
    }
    ///@}
};

} // namespace rdl

/* rdl_errno_t is an error code enum: `std::error_code ec = RDL_EBUSY;` and
 * `ec == RDL_ELOST` work. make_error_code() must sit in the enum's
 * (global) namespace for argument-dependent lookup to find it. */
namespace std
{
/** rdl_errno_t is an error code enum (rdl::category()). */
template <> struct is_error_code_enum<rdl_errno_t> : true_type {
};
} // namespace std

/** The std::error_code of `e`, in rdl::category(); what makes
 * `std::error_code ec = RDL_EBUSY;` work. */
inline std::error_code make_error_code(rdl_errno_t e) noexcept
{
    return std::error_code(static_cast<int>(e), rdl::category());
}

namespace rdl
{

/* ---- owners, leases ---------------------------------------------------------- */

/** Who holds a hold (rdl_owner_t). */
using owner_t = rdl_owner_t;

/** The calling thread's owner: the one the calls without an owner use. */
inline owner_t this_thread_owner() noexcept
{
    return rdl_owner_self();
}

/** The lease of a lock object that has no fixed one (a fixed lease is a
 * std::chrono::milliseconds given to the constructor instead). */
enum class lease {
    auto_renew /**< the client's watchdog keeps the hold alive until it is
                    released (its lease: options::watchdog_lease) */
};

/** Callback for lost holds and failed releases: the code (RDL_ELOST, or the
 * renewal error; for a failed release, its code) and the owner. It runs on
 * the client's loop thread (watchdog reports) or on the thread whose
 * release failed, must not block or throw, and may make no blocking rdl
 * call on the loop thread. */
using lost_callback = std::function<void(std::error_code, owner_t)>;

class client;
class multi_lock;

namespace detail
{

/* The C sentinels as constants, so that code built with -Wold-style-cast
 * does not warn about the casts in their macros at every use. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#endif
constexpr std::int64_t wait_forever = RDL_WAIT_FOREVER;
constexpr std::int64_t lease_auto = RDL_LEASE_AUTO;
constexpr std::int64_t lease_max_ms = RDL_LEASE_MAX_MS;
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

[[noreturn]] inline void throw_error(int rc, const char *call,
                                     const rdl_client_t *c)
{
    /* Read at once: the detail is per thread and the next call on the
     * client replaces it. */
    const char *detail = c != nullptr ? rdl_client_errmsg(c) : "";
    std::string what(call);
    if (detail != nullptr && *detail != '\0' &&
        std::strcmp(detail, rdl_strerror(rc)) != 0)
        what.append(" (").append(detail).append(")");
    throw error(rc, what);
}

inline void set_code(std::error_code &ec, int rc) noexcept
{
    if (rc == 0)
        ec.clear();
    else
        ec.assign(rc, category());
}

inline std::int64_t lease_ms(lease) noexcept
{
    return lease_auto;
}

/* A fixed lease of 0 or less is invalid; it must not reach the C call as
 * -1, which would mean RDL_LEASE_AUTO. 0 makes the acquisition fail with
 * RDL_EINVAL. */
inline std::int64_t lease_ms(std::chrono::milliseconds fixed) noexcept
{
    return fixed.count() > 0 ? static_cast<std::int64_t>(fixed.count()) : 0;
}

/* A wait budget for the C calls: rounded up (a wait never ends before the
 * time asked for), 0 for none, RDL_WAIT_FOREVER for more than a century
 * (duration::max() and the like, which would overflow the conversion). */
template <class Rep, class Period>
std::int64_t wait_ms(const std::chrono::duration<Rep, Period> &d) noexcept
{
    using std::chrono::milliseconds;
    if (d <= d.zero())
        return 0;
    if (std::chrono::duration<double, std::milli>(d).count() >=
        static_cast<double>(lease_max_ms))
        return wait_forever;
    milliseconds ms = std::chrono::duration_cast<milliseconds>(d);
    if (ms < d)
        ++ms;
    return static_cast<std::int64_t>(ms.count());
}

/* The budget until a time point of any clock, measured once against that
 * clock: the C calls wait by the monotonic clock, so a later jump of a
 * system clock does not move the deadline. */
template <class Clock, class Duration>
std::int64_t
wait_until_ms(const std::chrono::time_point<Clock, Duration> &t) noexcept
{
    if (t == std::chrono::time_point<Clock, Duration>::max())
        return wait_forever;
    const auto now = Clock::now();
    return t <= now ? 0 : wait_ms(t - now);
}

/* What the lost callback of a lock object needs; on the heap so that the
 * pointer given to rdl_lock_set_lost_cb() survives moves of the object.
 *
 * report() runs inside the C lost callback and inside unlock(), both
 * noexcept: an exception there (std::bad_alloc) would end the program in
 * std::terminate. So it allocates nothing: it takes a reference to the
 * callback (a shared_ptr, copied without allocating; a copy of the
 * std::function itself allocates when its target is larger than the
 * function's inline buffer), and records a loss in room made when the
 * owner acquired. */
struct lost_state {
    std::atomic<int> last{0};
    std::mutex mu;
    std::shared_ptr<const lost_callback> cb; /* null: none; guarded by mu */
    std::vector<owner_t> gone; /* owners whose loss the watchdog reported
                                  and who have not acquired since; guarded
                                  by mu */

    /* Records rc and calls the callback, except for a release that fails
     * with RDL_ELOST after the watchdog already reported that loss. The
     * callback runs without mu held: it may call on_lost() or
     * last_error(). */
    void report(owner_t owner, int rc, bool watchdog) noexcept
    {
        std::shared_ptr<const lost_callback> call;
        last.store(rc);
        {
            std::lock_guard<std::mutex> guard(mu);
            const bool known =
                std::find(gone.begin(), gone.end(), owner) != gone.end();
            if (watchdog && !known)
                remember(owner);
            else if (!watchdog && known && rc == RDL_ELOST)
                return;
            call = cb;
        }
        if (call && *call)
            (*call)(std::error_code(rc, category()), owner);
    }

    /* Under mu. acquired() left room, so this does not allocate unless
     * more owners lost their holds at once than it made room for; then, if
     * memory is out, the owner goes unrecorded and its failing release
     * reports the loss a second time: better than the program's end. */
    void remember(owner_t owner) noexcept
    {
        try {
            gone.push_back(owner);
        } catch (...) { /* std::bad_alloc: nothing else for an integer */
        }
    }

    void acquired(owner_t owner) noexcept
    {
        std::lock_guard<std::mutex> guard(mu);
        gone.erase(std::remove(gone.begin(), gone.end(), owner), gone.end());
        /* Room for this hold's loss, so that report() need not allocate.
         * Here (a caller's thread, after a grant) a failure costs only
         * that: remember() copes. */
        if (gone.size() == gone.capacity()) {
            try {
                gone.reserve(2 * gone.size() + 4);
            } catch (...) {
            }
        }
    }

    static void on_lost(rdl_lock_t *, rdl_owner_t owner, int reason,
                        void *data) noexcept
    {
        static_cast<lost_state *>(data)->report(owner, reason, true);
    }
};

} // namespace detail

/* ---- client ------------------------------------------------------------------ */

/** rdl_client_set_tls(); an empty string means NULL there. */
struct tls_options {
    std::string ca_file;     /**< rdl_tls_options_t::ca_file */
    std::string ca_dir;      /**< rdl_tls_options_t::ca_dir */
    std::string cert_file;   /**< rdl_tls_options_t::cert_file */
    std::string key_file;    /**< rdl_tls_options_t::key_file */
    std::string server_name; /**< rdl_tls_options_t::server_name */
    bool insecure = false;   /**< testing only: no verification at all */
};

/** rdl_client_set_timeouts_ms(): the connect and the per-command timeout. */
struct timeouts {
    std::chrono::milliseconds connect; /**< the connect timeout */
    std::chrono::milliseconds command; /**< the per-command timeout */
};

/** rdl_client_set_durability(): acquisitions reported only once `replicas`
 * replicas (all_replicas: every one the master lists) confirmed them;
 * rdl_client_set_durable_level(): what confirms them, WAIT
 * (RDL_DURABLE_RECEIVED) or WAITAOF (RDL_DURABLE_FSYNCED,
 * RDL_DURABLE_FSYNCED_MASTER). */
struct durability {
    static constexpr int all_replicas = RDL_REPLICAS_ALL; /**< every replica */
    int replicas;                      /**< 0 (off), 1..1000 or all_replicas */
    std::chrono::milliseconds timeout; /**< how long to wait for them */
    int level = RDL_DURABLE_RECEIVED;  /**< RDL_DURABLE_*: what confirms */
};

/** Client configuration; what is left unset keeps the library's default
 * (documented once, in <rdl/client.h>). */
struct options {
    /** rdl_client_set_timeouts_ms(). */
    std::optional<rdl::timeouts> timeouts;
    /** rdl_client_set_watchdog_ms(): the lease of auto_renew holds. */
    std::optional<std::chrono::milliseconds> watchdog_lease;
    /** rdl_client_set_prefix(): the prefix of every key. */
    std::optional<std::string> prefix;
    /** Used with rediss URLs. */
    std::optional<tls_options> tls;
    /** Durable acquisitions (docs/deployments.md, "Durable acquisitions"). */
    std::optional<rdl::durability> durability;
};

/** The tag of rdl::client's constructors that do not connect: for programs
 * that configure the client further through the C API (get()) first, or
 * connect later, as std::defer_lock defers a lock. */
struct defer_connect_t {
    /** Explicit, as std::defer_lock_t's: `{}` alone is not the tag. */
    explicit defer_connect_t() = default;
};
/** The tag: `rdl::client c(url, rdl::defer_connect);`. */
inline constexpr defer_connect_t defer_connect{};

/** One connection set to one deployment, with its own loop thread. Lock
 * objects are made from it and must not outlive it. Move-only. */
class client
{
  public:
    ///@{
    /** A client for `url` (rdl_client_set_url()'s forms), connected: the
     * constructor blocks until the client is ready (at most the connect
     * timeout); with `opts`, configured by them first. Throws rdl::error:
     * RDL_EINVAL for a malformed URL or option, RDL_ETLS for unreadable TLS
     * files, and rdl_client_connect()'s codes (RDL_ECONNREFUSED, RDL_EAUTH,
     * RDL_ETLS, ...). */
    explicit client(std::string_view url) : client(url, options{})
    {
    }
    client(std::string_view url, const options &opts)
        : client(url, opts, defer_connect)
    {
        connect();
    }
    ///@}

    ///@{
    /** The same, not connected: call connect() before the first lock call
     * (which fails with RDL_ENOTCONN until then). Throws rdl::error for a
     * malformed URL or option. */
    client(std::string_view url, defer_connect_t)
        : client(url, options{}, defer_connect)
    {
    }
    client(std::string_view url, const options &opts, defer_connect_t)
    {
        rdl_client_t *c = nullptr;
        int rc = rdl_client_new(&c);
        if (rc != 0)
            detail::throw_error(rc, "rdl_client_new", nullptr);
        c_.reset(c);
        check(rdl_client_set_url(c, std::string(url).c_str()),
              "rdl_client_set_url");
        if (opts.timeouts)
            check(rdl_client_set_timeouts_ms(c, opts.timeouts->connect.count(),
                                             opts.timeouts->command.count()),
                  "rdl_client_set_timeouts_ms");
        if (opts.watchdog_lease)
            check(rdl_client_set_watchdog_ms(c, opts.watchdog_lease->count()),
                  "rdl_client_set_watchdog_ms");
        if (opts.prefix)
            check(rdl_client_set_prefix(c, opts.prefix->c_str()),
                  "rdl_client_set_prefix");
        if (opts.tls)
            set_tls(*opts.tls);
        if (opts.durability) {
            check(rdl_client_set_durability(c, opts.durability->replicas,
                                            opts.durability->timeout.count()),
                  "rdl_client_set_durability");
            check(rdl_client_set_durable_level(c, opts.durability->level),
                  "rdl_client_set_durable_level");
        }
    }
    ///@}

    ///@{
    /** Move-only: the C client moves; a moved-from client may only be
     * destroyed or assigned to. */
    client(client &&) noexcept = default;
    client &operator=(client &&) noexcept = default;
    client(const client &) = delete;
    client &operator=(const client &) = delete;
    ///@}
    /** rdl_client_free(): closes the client; holds expire by their leases. */
    ~client() = default;

    ///@{
    /** Connects a client made with rdl::defer_connect (blocks until
     * ready). Throws rdl::error: RDL_ECONNREFUSED, RDL_EAUTH, RDL_ETLS,
     * ... (rdl_client_connect()); RDL_EINVAL if it is connected already.
     * After a failure it may be called again. */
    void connect()
    {
        check(rdl_client_connect(get()), "rdl_client_connect");
    }
    void connect(std::error_code &ec) noexcept
    {
        detail::set_code(ec, rdl_client_connect(get()));
    }
    ///@}

    /** The C client, for the C API (NULL once moved from). */
    rdl_client_t *get() const noexcept
    {
        return c_.get();
    }

    /** rdl_client_id(): how Redis records this client's owners. */
    std::string_view id() const noexcept
    {
        const char *s = c_ ? rdl_client_id(c_.get()) : nullptr;
        return s != nullptr ? std::string_view(s) : std::string_view();
    }

    /** rdl_client_errmsg(): the detail of the calling thread's last error. */
    std::string errmsg() const
    {
        return c_ ? rdl_client_errmsg(c_.get()) : "";
    }

  private:
    struct deleter {
        void operator()(rdl_client_t *c) const noexcept
        {
            rdl_client_free(c);
        }
    };
    std::unique_ptr<rdl_client_t, deleter> c_;

    void check(int rc, const char *call) const
    {
        if (rc != 0)
            detail::throw_error(rc, call, c_.get());
    }

    void set_tls(const tls_options &t)
    {
        auto str = [](const std::string &s) {
            return s.empty() ? nullptr : s.c_str();
        };
        rdl_tls_options_t o{};
        o.ca_file = str(t.ca_file);
        o.ca_dir = str(t.ca_dir);
        o.cert_file = str(t.cert_file);
        o.key_file = str(t.key_file);
        o.server_name = str(t.server_name);
        o.insecure = t.insecure ? 1 : 0;
        check(rdl_client_set_tls(c_.get(), &o), "rdl_client_set_tls");
    }
};

/* ---- locks ------------------------------------------------------------------- */

/** The operations every lock type shares: Lockable and TimedLockable over
 * its exclusive side, the explicit-owner forms, the hold's token and
 * validity, lost-hold reporting. Not made directly: use rdl::mutex,
 * rdl::fair_mutex, rdl::shared_mutex or rdl::multi_lock. */
class lock_base
{
  public:
    lock_base(const lock_base &) = delete;
    lock_base &operator=(const lock_base &) = delete;

    ///@{
    /** Blocks until held. Throws rdl::error (RDL_ELOST when a re-entry
     * finds the hold gone, RDL_ECLOSED, connection errors, ...). */
    void lock()
    {
        lock_as(this_thread_owner());
    }
    void lock(std::error_code &ec) noexcept
    {
        lock_as(this_thread_owner(), ec);
    }
    ///@}

    ///@{
    /** One try: false if another owner holds it. */
    [[nodiscard]] bool try_lock()
    {
        return try_lock_as(this_thread_owner());
    }
    [[nodiscard]] bool try_lock(std::error_code &ec) noexcept
    {
        return try_lock_as(this_thread_owner(), ec);
    }
    ///@}

    ///@{
    /** Waits at most d (rounded up to milliseconds): false when it ran
     * out. */
    template <class Rep, class Period>
    [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
    {
        return try_on(x_, this_thread_owner(), detail::wait_ms(d));
    }
    template <class Rep, class Period>
    [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period> &d,
                                    std::error_code &ec) noexcept
    {
        return try_on(x_, this_thread_owner(), detail::wait_ms(d), ec);
    }
    ///@}

    ///@{
    /** Waits until t, of any clock (see detail::wait_until_ms()). */
    template <class Clock, class Duration>
    [[nodiscard]] bool
    try_lock_until(const std::chrono::time_point<Clock, Duration> &t)
    {
        return try_on(x_, this_thread_owner(), detail::wait_until_ms(t));
    }
    template <class Clock, class Duration>
    [[nodiscard]] bool
    try_lock_until(const std::chrono::time_point<Clock, Duration> &t,
                   std::error_code &ec) noexcept
    {
        return try_on(x_, this_thread_owner(), detail::wait_until_ms(t), ec);
    }
    ///@}

    /** Releases one level; never throws. A failure is recorded in
     * last_error() and reported to the on_lost() callback. */
    void unlock() noexcept
    {
        std::error_code ec;
        unlock_on(x_, this_thread_owner(), ec);
    }
    /** The same, also giving the outcome. */
    void unlock(std::error_code &ec) noexcept
    {
        unlock_on(x_, this_thread_owner(), ec);
    }

    ///@{
    /** The explicit-owner forms of lock(), try_lock(), try_lock_for() and
     * unlock(), for `owner` (hand-offs between threads: see the top of
     * this file). */
    void lock_as(owner_t owner)
    {
        std::error_code ec;
        lock_on(x_, owner, ec);
        if (ec)
            detail::throw_error(ec.value(), "rdl_lock_acquire", client_);
    }
    void lock_as(owner_t owner, std::error_code &ec) noexcept
    {
        lock_on(x_, owner, ec);
    }
    [[nodiscard]] bool try_lock_as(owner_t owner)
    {
        return try_on(x_, owner, 0);
    }
    [[nodiscard]] bool try_lock_as(owner_t owner, std::error_code &ec) noexcept
    {
        return try_on(x_, owner, 0, ec);
    }
    template <class Rep, class Period>
    [[nodiscard]] bool
    try_lock_for_as(owner_t owner, const std::chrono::duration<Rep, Period> &d)
    {
        return try_on(x_, owner, detail::wait_ms(d));
    }
    template <class Rep, class Period>
    [[nodiscard]] bool
    try_lock_for_as(owner_t owner, const std::chrono::duration<Rep, Period> &d,
                    std::error_code &ec) noexcept
    {
        return try_on(x_, owner, detail::wait_ms(d), ec);
    }
    void unlock_as(owner_t owner) noexcept
    {
        std::error_code ec;
        unlock_on(x_, owner, ec);
    }
    void unlock_as(owner_t owner, std::error_code &ec) noexcept
    {
        unlock_on(x_, owner, ec);
    }
    ///@}

    ///@{
    /** The fencing token of the owner's hold (0 if it holds none); local
     * state, no round trip. Pass it to the resource the lock guards. */
    std::uint64_t fencing_token() const noexcept
    {
        return fencing_token(this_thread_owner());
    }
    std::uint64_t fencing_token(owner_t owner) const noexcept
    {
        return rdl_lock_fencing_token(x_, owner);
    }
    ///@}

    ///@{
    /** How long the owner's hold is known to stay valid (0 if none, lost or
     * run out): check it right before a write the lock protects. */
    std::chrono::milliseconds valid_for() const noexcept
    {
        return valid_for(this_thread_owner());
    }
    std::chrono::milliseconds valid_for(owner_t owner) const noexcept
    {
        return std::chrono::milliseconds(rdl_lock_valid_ms(x_, owner));
    }
    ///@}

    /** Sets (or with an empty function clears) the callback for holds of
     * this object that were lost or failed to release, for every owner.
     * When it returns, no call of the previous callback is running. The
     * callback is stored here (this may throw std::bad_alloc) so that the
     * reports, made where nothing may throw, allocate nothing. */
    void on_lost(lost_callback cb)
    {
        if (!st_)
            detail::throw_error(RDL_EINVAL, "on_lost", nullptr);
        /* Allocated here, where a failure throws to the caller, so that
         * report() takes it without allocating. */
        std::shared_ptr<const lost_callback> p;
        if (cb)
            p = std::make_shared<lost_callback>(std::move(cb));
        {
            std::lock_guard<std::mutex> guard(st_->mu);
            st_->cb.swap(p);
        }
        /* Setting the same C callback again waits for a running call. */
        install_lost_cb();
    }

    /** The outcome of the last unlock (any owner; clear if it succeeded) or
     * the reason of the last loss the watchdog reported, whichever came
     * last. */
    std::error_code last_error() const noexcept
    {
        return std::error_code(st_ ? st_->last.load() : RDL_EINVAL, category());
    }

    /** The C lock (its exclusive view for shared_mutex); NULL once moved
     * from. */
    rdl_lock_t *native_handle() const noexcept
    {
        return x_;
    }

    /** The lock's name (rdl_lock_name()); empty once moved from. */
    std::string_view name() const noexcept
    {
        const char *s = rdl_lock_name(x_);
        return s != nullptr ? std::string_view(s) : std::string_view();
    }

    /// @cond INTERNAL
  protected:
    using free_fn = void (*)(void *);

    lock_base(rdl_client_t *c, std::int64_t lease_ms)
        : st_(new detail::lost_state), client_(c), lease_ms_(lease_ms)
    {
    }

    lock_base(lock_base &&o) noexcept
        : st_(std::move(o.st_)), obj_(std::move(o.obj_)),
          x_(std::exchange(o.x_, nullptr)), r_(std::exchange(o.r_, nullptr)),
          client_(o.client_), lease_ms_(o.lease_ms_)
    {
    }

    /* The C object goes first: its lost callback may be running with the
     * old state until rdl_lock_free() returns. */
    lock_base &operator=(lock_base &&o) noexcept
    {
        if (this != &o) {
            obj_.reset();
            st_ = std::move(o.st_);
            obj_ = std::move(o.obj_);
            x_ = std::exchange(o.x_, nullptr);
            r_ = std::exchange(o.r_, nullptr);
            client_ = o.client_;
            lease_ms_ = o.lease_ms_;
        }
        return *this;
    }

    ~lock_base() = default;

    /* Takes ownership of a C object made by a constructor (freed with
     * `free`) and its exclusive and, for a read-write lock, read view. */
    void adopt(void *obj, free_fn free, rdl_lock_t *x, rdl_lock_t *r) noexcept
    {
        obj_ = std::unique_ptr<void, free_fn>(obj, free);
        x_ = x;
        r_ = r;
        install_lost_cb();
    }

    /* Makes a lock with one of the C constructors of <rdl/lock.h>. */
    void make(int (*ctor)(rdl_client_t *, const char *, rdl_lock_t **),
              std::string_view name, const char *call)
    {
        rdl_lock_t *l = nullptr;
        int rc = ctor(client_, std::string(name).c_str(), &l);
        if (rc != 0)
            detail::throw_error(rc, call, client_);
        adopt(l, free_lock, l, nullptr);
    }

    static void free_lock(void *p) noexcept
    {
        rdl_lock_free(static_cast<rdl_lock_t *>(p));
    }

    /* Frees the C object now (multi_lock gives its parts back first). */
    void free_object() noexcept
    {
        obj_.reset();
        x_ = r_ = nullptr;
    }

    /* The C lost callback on both views; also restores a part's after a
     * multi_lock, which replaced it, is freed. */
    void install_lost_cb() noexcept
    {
        for (rdl_lock_t *v : {x_, r_})
            if (v != nullptr && st_)
                (void)rdl_lock_set_lost_cb(v, detail::lost_state::on_lost,
                                           st_.get());
    }

    /* Acquires view v: true when held; false for "busy" and "timed out"
     * (ec clear) and for errors (ec set). */
    bool try_on(rdl_lock_t *v, owner_t owner, std::int64_t wait,
                std::error_code &ec) noexcept
    {
        int rc = rdl_lock_acquire_as(v, owner, wait, lease_ms_);
        if (rc == 0 && st_)
            st_->acquired(owner);
        detail::set_code(ec, rc == RDL_EBUSY || rc == RDL_ETIMEDOUT ? 0 : rc);
        return rc == 0;
    }
    bool try_on(rdl_lock_t *v, owner_t owner, std::int64_t wait)
    {
        std::error_code ec;
        bool held = try_on(v, owner, wait, ec);
        if (ec)
            detail::throw_error(ec.value(), "rdl_lock_acquire", client_);
        return held;
    }

    void lock_on(rdl_lock_t *v, owner_t owner, std::error_code &ec) noexcept
    {
        /* Without a budget "busy" cannot happen; should it, it is an
         * error, not a silent "not held". */
        if (!try_on(v, owner, detail::wait_forever, ec) && !ec)
            ec.assign(RDL_ETIMEDOUT, category());
    }

    void unlock_on(rdl_lock_t *v, owner_t owner, std::error_code &ec) noexcept
    {
        int rc = rdl_lock_release_as(v, owner);
        detail::set_code(ec, rc);
        if (!st_)
            return;
        if (rc == 0)
            st_->last.store(0);
        else
            st_->report(owner, rc, false);
    }

    rdl_lock_t *read_view() const noexcept
    {
        return r_;
    }

    rdl_client_t *client_handle() const noexcept
    {
        return client_;
    }

  private:
    friend class multi_lock;

    /* Declared before obj_, so destroyed after it (see operator=). */
    std::unique_ptr<detail::lost_state> st_;
    std::unique_ptr<void, free_fn> obj_{nullptr, nullptr};
    rdl_lock_t *x_ = nullptr; /* exclusive view */
    rdl_lock_t *r_ = nullptr; /* read view (shared_mutex) */
    rdl_client_t *client_;    /* for rdl_client_errmsg() */
    std::int64_t lease_ms_;
    /// @endcond
};

/** The reentrant lock (rdl_lock_new()): one owner at a time; not FIFO. */
class mutex : public lock_base
{
  public:
    ///@{
    /** The lock named `name` of client `c`, with the watchdog's renewed
     * lease (the default) or a fixed lease. Throws rdl::error. */
    mutex(client &c, std::string_view name) : mutex(c, name, lease::auto_renew)
    {
    }
    mutex(client &c, std::string_view name, lease l)
        : lock_base(c.get(), detail::lease_ms(l))
    {
        make(rdl_lock_new, name, "rdl_lock_new");
    }
    mutex(client &c, std::string_view name,
          std::chrono::milliseconds fixed_lease)
        : lock_base(c.get(), detail::lease_ms(fixed_lease))
    {
        make(rdl_lock_new, name, "rdl_lock_new");
    }
    ///@}
    ///@{
    /** Movable: the C object moves; a moved-from object may only be
     * destroyed or assigned to. */
    mutex(mutex &&) noexcept = default;
    mutex &operator=(mutex &&) noexcept = default;
    ///@}
};

/** The fair lock (rdl_fairlock_new()): granted in order of arrival at
 * Redis. A different lock from an rdl::mutex of the same name. */
class fair_mutex : public lock_base
{
  public:
    ///@{
    /** The fair lock named `name` of client `c`, with the watchdog's
     * renewed lease (the default) or a fixed lease. Throws rdl::error. */
    fair_mutex(client &c, std::string_view name)
        : fair_mutex(c, name, lease::auto_renew)
    {
    }
    fair_mutex(client &c, std::string_view name, lease l)
        : lock_base(c.get(), detail::lease_ms(l))
    {
        make(rdl_fairlock_new, name, "rdl_fairlock_new");
    }
    fair_mutex(client &c, std::string_view name,
               std::chrono::milliseconds fixed_lease)
        : lock_base(c.get(), detail::lease_ms(fixed_lease))
    {
        make(rdl_fairlock_new, name, "rdl_fairlock_new");
    }
    ///@}
    ///@{
    /** Movable: the C object moves; a moved-from object may only be
     * destroyed or assigned to. */
    fair_mutex(fair_mutex &&) noexcept = default;
    fair_mutex &operator=(fair_mutex &&) noexcept = default;
    ///@}
};

/** The read-write lock (rdl_rwlock_new(), writers first): the lock_base
 * calls act on the write side, the _shared calls on the read side. An
 * owner holding the read side gets RDL_EDEADLK from lock() (an upgrade
 * would wait on itself); one holding the write side may lock_shared()
 * (downgrade). The lost callback covers both sides. */
class shared_mutex : public lock_base
{
  public:
    ///@{
    /** The read-write lock named `name` of client `c`, with the watchdog's
     * renewed lease (the default) or a fixed lease, for both sides. Throws
     * rdl::error. */
    shared_mutex(client &c, std::string_view name)
        : shared_mutex(c, name, lease::auto_renew)
    {
    }
    shared_mutex(client &c, std::string_view name, lease l)
        : lock_base(c.get(), detail::lease_ms(l))
    {
        make_rw(c, name);
    }
    shared_mutex(client &c, std::string_view name,
                 std::chrono::milliseconds fixed_lease)
        : lock_base(c.get(), detail::lease_ms(fixed_lease))
    {
        make_rw(c, name);
    }
    ///@}
    ///@{
    /** Movable: the C object moves; a moved-from object may only be
     * destroyed or assigned to. */
    shared_mutex(shared_mutex &&) noexcept = default;
    shared_mutex &operator=(shared_mutex &&) noexcept = default;
    ///@}

    ///@{
    /** Blocks until the read side is held: as lock(), for the read side. */
    void lock_shared()
    {
        lock_shared_as(this_thread_owner());
    }
    void lock_shared(std::error_code &ec) noexcept
    {
        lock_on(read_view(), this_thread_owner(), ec);
    }
    ///@}
    ///@{
    /** One try at the read side: false if another owner holds the write
     * side or, writers first, a writer waits for it. */
    [[nodiscard]] bool try_lock_shared()
    {
        return try_on(read_view(), this_thread_owner(), 0);
    }
    [[nodiscard]] bool try_lock_shared(std::error_code &ec) noexcept
    {
        return try_on(read_view(), this_thread_owner(), 0, ec);
    }
    ///@}
    ///@{
    /** Waits at most d for the read side: as try_lock_for(). */
    template <class Rep, class Period>
    [[nodiscard]] bool
    try_lock_shared_for(const std::chrono::duration<Rep, Period> &d)
    {
        return try_on(read_view(), this_thread_owner(), detail::wait_ms(d));
    }
    template <class Rep, class Period>
    [[nodiscard]] bool
    try_lock_shared_for(const std::chrono::duration<Rep, Period> &d,
                        std::error_code &ec) noexcept
    {
        return try_on(read_view(), this_thread_owner(), detail::wait_ms(d), ec);
    }
    ///@}
    ///@{
    /** Waits until t for the read side: as try_lock_until(). */
    template <class Clock, class Duration>
    [[nodiscard]] bool
    try_lock_shared_until(const std::chrono::time_point<Clock, Duration> &t)
    {
        return try_on(read_view(), this_thread_owner(),
                      detail::wait_until_ms(t));
    }
    template <class Clock, class Duration>
    [[nodiscard]] bool
    try_lock_shared_until(const std::chrono::time_point<Clock, Duration> &t,
                          std::error_code &ec) noexcept
    {
        return try_on(read_view(), this_thread_owner(),
                      detail::wait_until_ms(t), ec);
    }
    ///@}
    ///@{
    /** Releases one level of the read side; as unlock(), never throws. */
    void unlock_shared() noexcept
    {
        unlock_shared_as(this_thread_owner());
    }
    void unlock_shared(std::error_code &ec) noexcept
    {
        unlock_on(read_view(), this_thread_owner(), ec);
    }
    ///@}

    ///@{
    /** The explicit-owner forms of lock_shared(), try_lock_shared() and
     * unlock_shared(), for `owner`. */
    void lock_shared_as(owner_t owner)
    {
        std::error_code ec;
        lock_on(read_view(), owner, ec);
        if (ec)
            detail::throw_error(ec.value(), "rdl_lock_acquire",
                                client_handle());
    }
    void lock_shared_as(owner_t owner, std::error_code &ec) noexcept
    {
        lock_on(read_view(), owner, ec);
    }
    [[nodiscard]] bool try_lock_shared_as(owner_t owner)
    {
        return try_on(read_view(), owner, 0);
    }
    [[nodiscard]] bool try_lock_shared_as(owner_t owner,
                                          std::error_code &ec) noexcept
    {
        return try_on(read_view(), owner, 0, ec);
    }
    void unlock_shared_as(owner_t owner) noexcept
    {
        std::error_code ec;
        unlock_on(read_view(), owner, ec);
    }
    void unlock_shared_as(owner_t owner, std::error_code &ec) noexcept
    {
        unlock_on(read_view(), owner, ec);
    }
    ///@}

    ///@{
    /** The read side's token and validity for the owner. */
    std::uint64_t shared_fencing_token() const noexcept
    {
        return rdl_lock_fencing_token(read_view(), this_thread_owner());
    }
    std::chrono::milliseconds shared_valid_for() const noexcept
    {
        return std::chrono::milliseconds(
            rdl_lock_valid_ms(read_view(), this_thread_owner()));
    }
    ///@}

  private:
    static void free_rw(void *p) noexcept
    {
        rdl_rwlock_free(static_cast<rdl_rwlock_t *>(p));
    }

    void make_rw(client &c, std::string_view name)
    {
        rdl_rwlock_t *rw = nullptr;
        int rc = rdl_rwlock_new(c.get(), std::string(name).c_str(), &rw);
        if (rc != 0)
            detail::throw_error(rc, "rdl_rwlock_new", c.get());
        adopt(rw, free_rw, rdl_rwlock_write(rw), rdl_rwlock_read(rw));
    }
};

/** The semaphore (rdl_semaphore_new()), shaped like std::counting_semaphore:
 * acquire() takes one of the permits, release() gives one back, and at
 * most `permits` are held at once across every client (the total stored
 * in Redis wins: see <rdl/semaphore.h>). Permits are held by owners (the
 * calling thread, or the _as forms), leased and fenced like every lock; it
 * is also Lockable (lock() = acquire(), unlock() = release()), so
 * std::lock_guard holds one permit. */
class counting_semaphore : public lock_base
{
  public:
    ///@{
    /** The semaphore named `name` of client `c`, with `permits` permits if
     * Redis has no total for it yet, each held with the watchdog's renewed
     * lease (the default) or a fixed lease. Throws rdl::error. */
    counting_semaphore(client &c, std::string_view name, std::uint32_t permits)
        : counting_semaphore(c, name, permits, lease::auto_renew)
    {
    }
    counting_semaphore(client &c, std::string_view name, std::uint32_t permits,
                       lease l)
        : lock_base(c.get(), detail::lease_ms(l))
    {
        make_sem(name, permits);
    }
    counting_semaphore(client &c, std::string_view name, std::uint32_t permits,
                       std::chrono::milliseconds fixed_lease)
        : lock_base(c.get(), detail::lease_ms(fixed_lease))
    {
        make_sem(name, permits);
    }
    ///@}
    ///@{
    /** Movable: the C object moves; a moved-from object may only be
     * destroyed or assigned to. */
    counting_semaphore(counting_semaphore &&) noexcept = default;
    counting_semaphore &operator=(counting_semaphore &&) noexcept = default;
    ///@}

    /** The largest total rdl accepts (std::counting_semaphore::max()). */
    static constexpr std::ptrdiff_t max() noexcept
    {
        return RDL_SEMAPHORE_MAX_PERMITS;
    }

    ///@{
    /** Blocks until a permit is taken; throws rdl::error. */
    void acquire()
    {
        lock();
    }
    void acquire(std::error_code &ec) noexcept
    {
        lock(ec);
    }
    ///@}
    ///@{
    /** One try: false if every permit is taken. */
    [[nodiscard]] bool try_acquire()
    {
        return try_lock();
    }
    [[nodiscard]] bool try_acquire(std::error_code &ec) noexcept
    {
        return try_lock(ec);
    }
    ///@}
    ///@{
    /** Waits at most d for a permit: false when it ran out. */
    template <class Rep, class Period>
    [[nodiscard]] bool
    try_acquire_for(const std::chrono::duration<Rep, Period> &d)
    {
        return try_lock_for(d);
    }
    template <class Rep, class Period>
    [[nodiscard]] bool
    try_acquire_for(const std::chrono::duration<Rep, Period> &d,
                    std::error_code &ec) noexcept
    {
        return try_lock_for(d, ec);
    }
    ///@}
    /** Waits until t, of any clock, for a permit: false when it passed. */
    template <class Clock, class Duration>
    [[nodiscard]] bool
    try_acquire_until(const std::chrono::time_point<Clock, Duration> &t)
    {
        return try_lock_until(t);
    }

    ///@{
    /** Gives back `update` permits of the calling thread (default one);
     * never throws: a failure (the owner held fewer) is recorded in
     * last_error() and reported to the on_lost() callback, as unlock(). */
    void release(std::ptrdiff_t update = 1) noexcept
    {
        std::error_code ec;
        release(update, ec);
    }
    void release(std::ptrdiff_t update, std::error_code &ec) noexcept
    {
        ec.clear();
        for (std::ptrdiff_t i = 0; i < update && !ec; i++)
            unlock(ec);
    }
    ///@}

    /** Stores a new total for every client (rdl_semaphore_set_permits()). */
    void set_permits(std::uint32_t permits)
    {
        int rc = rdl_semaphore_set_permits(native_handle(), permits);
        if (rc != 0)
            detail::throw_error(rc, "rdl_semaphore_set_permits",
                                client_handle());
    }

  private:
    void make_sem(std::string_view name, std::uint32_t permits)
    {
        rdl_lock_t *l = nullptr;
        int rc = rdl_semaphore_new(client_handle(), std::string(name).c_str(),
                                   permits, &l);
        if (rc != 0)
            detail::throw_error(rc, "rdl_semaphore_new", client_handle());
        adopt(l, free_lock, l, nullptr);
    }
};

/** All or nothing over several locks (rdl_multilock_new()): lock() holds
 * every part or none, taken in one canonical order, so two multi_locks
 * over overlapping parts never deadlock -- the way to hold several
 * distributed locks at once. std::lock and std::scoped_lock also work
 * with rdl's types, but by trying and backing off, one round trip per
 * part and retry. A shared_mutex takes part with its write side.
 *
 * While the multi_lock exists it owns its parts' lost callbacks (the C
 * rule): a part's on_lost() callback runs again once it is destroyed. Each
 * part's fencing_token() is its own while the multi_lock holds it;
 * fencing_token() here is the largest. */
class multi_lock : public lock_base
{
  public:
    ///@{
    /** A multilock over `parts` (lock objects of any client), with the
     * watchdog's renewed lease (the default) or a fixed lease for every
     * part. Throws rdl::error (RDL_EINVAL for bad parts: see
     * rdl_multilock_new()). */
    multi_lock(std::initializer_list<lock_base *> parts)
        : multi_lock(parts, lease::auto_renew)
    {
    }
    multi_lock(std::initializer_list<lock_base *> parts, lease l)
        : lock_base(first_client(parts), detail::lease_ms(l)), parts_(parts)
    {
        make_multi();
    }
    multi_lock(std::initializer_list<lock_base *> parts,
               std::chrono::milliseconds fixed_lease)
        : lock_base(first_client(parts), detail::lease_ms(fixed_lease)),
          parts_(parts)
    {
        make_multi();
    }
    ///@}
    ///@{
    /** For a number of parts known at run time. */
    explicit multi_lock(std::vector<lock_base *> parts,
                        lease l = lease::auto_renew)
        : lock_base(first_client(parts), detail::lease_ms(l)),
          parts_(std::move(parts))
    {
        make_multi();
    }
    multi_lock(std::vector<lock_base *> parts,
               std::chrono::milliseconds fixed_lease)
        : lock_base(first_client(parts), detail::lease_ms(fixed_lease)),
          parts_(std::move(parts))
    {
        make_multi();
    }
    ///@}

    ///@{
    /** Movable: the C object and the parts move; a moved-from object may
     * only be destroyed or assigned to. */
    multi_lock(multi_lock &&o) noexcept
        : lock_base(std::move(o)), parts_(std::move(o.parts_))
    {
        o.parts_.clear();
    }
    multi_lock &operator=(multi_lock &&o) noexcept
    {
        if (this != &o) {
            give_back();
            lock_base::operator=(std::move(o));
            parts_ = std::move(o.parts_);
            o.parts_.clear();
        }
        return *this;
    }
    ///@}
    /** Frees the C multilock (holds expire by their leases) and gives the
     * parts their own lost callbacks back. */
    ~multi_lock()
    {
        give_back();
    }

  private:
    std::vector<lock_base *> parts_;

    template <class Parts>
    static rdl_client_t *first_client(const Parts &parts) noexcept
    {
        return parts.size() != 0 && *parts.begin() != nullptr
                   ? (*parts.begin())->client_
                   : nullptr;
    }

    void make_multi()
    {
        std::vector<rdl_lock_t *> views;
        for (lock_base *p : parts_)
            views.push_back(p != nullptr ? p->x_ : nullptr);
        rdl_lock_t *l = nullptr;
        int rc = rdl_multilock_new(views.data(), views.size(), &l);
        if (rc != 0)
            detail::throw_error(rc, "rdl_multilock_new", first_client(parts_));
        adopt(l, free_lock, l, nullptr);
    }

    /* Frees the C multilock, which clears its parts' callbacks, then
     * installs theirs again. */
    void give_back() noexcept
    {
        free_object();
        for (lock_base *p : parts_)
            if (p != nullptr)
                p->install_lost_cb();
        parts_.clear();
    }
};

} // namespace rdl

#endif
