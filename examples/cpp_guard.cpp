/* A guarded critical section in C++: std::unique_lock over rdl::mutex, and
 * a write that carries the hold's fencing token.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./cpp_guard
 *
 * The store remembers the largest token it has accepted and refuses a
 * write with a smaller one. The second part shows why that matters: a
 * holder pauses past its lease, another thread takes the lock and writes,
 * and the late holder's write is refused; its release (at the end of the
 * std::unique_lock's scope) does not throw, it records RDL_ELOST. */
#include <rdl.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "example_server.h"

using namespace std::chrono_literals;

namespace
{

/* The resource the lock guards. In a real system this check lives where
 * the data does: a conditional update in the database, a check in the
 * service that owns the file. */
class fenced_store
{
  public:
    bool write(std::uint64_t token, const std::string &value)
    {
        std::lock_guard<std::mutex> guard(mu_);
        if (token < highest_)
            return false;
        highest_ = token;
        value_ = value;
        return true;
    }

  private:
    std::mutex mu_;
    std::uint64_t highest_ = 0;
    std::string value_;
};

void report(const char *who, std::uint64_t token, bool accepted)
{
    std::printf("%s: write with fencing token %" PRIu64 " %s\n", who, token,
                accepted ? "accepted" : "REFUSED (stale token)");
    std::fflush(stdout);
}

/* Three guarded critical sections; waits at most 5 s for each. */
void worker(rdl::mutex &lock, fenced_store &store, const char *who)
{
    for (int i = 0; i < 3; i++) {
        std::unique_lock<rdl::mutex> hold(lock, 5s);
        if (!hold) {
            std::fprintf(stderr, "%s: gave up waiting\n", who);
            return;
        }
        report(who, lock.fencing_token(),
               store.write(lock.fencing_token(), who));
        std::this_thread::sleep_for(50ms);
    }
}

} // namespace

int main()
{
    const char *url = std::getenv("RDL_URL");
    try {
        /* Deferred, to set RDL_TLS_* through the C API first, as every
         * example reads them; rdl::client(url) alone connects at once. */
        rdl::client client(url != nullptr ? url : "redis://127.0.0.1:6379",
                           rdl::defer_connect);
        if (url != nullptr && example_set_server(client.get(), url) != 0)
            throw rdl::error(RDL_EINVAL, "RDL_URL: " + client.errmsg());
        client.connect();
        fenced_store store;
        rdl::mutex lock(client, "example:cpp_guard"); /* auto-renewed */

        std::thread a(worker, std::ref(lock), std::ref(store), "thread A");
        std::thread b(worker, std::ref(lock), std::ref(store), "thread B");
        a.join();
        b.join();

        /* The same lock through an object with a fixed 300 ms lease. */
        rdl::mutex brief(client, "example:cpp_guard", 300ms);
        std::unique_lock<rdl::mutex> late(brief);
        const std::uint64_t stale = brief.fencing_token();
        std::this_thread::sleep_for(500ms); /* a pause past the lease */
        std::thread(worker, std::ref(lock), std::ref(store), "thread C").join();
        const bool accepted = store.write(stale, "late holder");
        report("late holder", stale, accepted);
        late.unlock();
        std::printf("late holder: release: %s\n",
                    brief.last_error().message().c_str());
        return accepted || brief.last_error() != RDL_ELOST ? 1 : 0;
    } catch (const rdl::error &e) {
        std::fprintf(stderr, "cpp_guard: %s\n", e.what());
        return 1;
    }
}
