/* The C++ program every consumer project builds next to main.c: it
 * includes <rdl.hpp> from the installed (or added) headers and links the
 * same library, so a header missing from the install, or one that does not
 * compile warning-free as C++17 in a consumer's tree, fails the build. */
#include <rdl.hpp>

#include <cstdio>
#include <cstring>
#include <mutex>

int main()
{
    if (std::strcmp(rdl_version_string(), RDL_VERSION_STRING) != 0) {
        std::fprintf(stderr, "consumer_cpp: library %s, headers %s\n",
                     rdl_version_string(), RDL_VERSION_STRING);
        return 1;
    }
    const std::error_code busy = RDL_EBUSY;
    std::printf("consumer_cpp: rdl %s; %s: %s\n", rdl_version_string(),
                busy.category().name(), busy.message().c_str());

    /* Objects are made without a server: neither talks to one. */
    try {
        rdl::client client("redis://127.0.0.1:6379", rdl::defer_connect);
        rdl::mutex mutex(client, "consumer");
        std::unique_lock<rdl::mutex> hold(mutex, std::defer_lock);
        return hold.owns_lock() ? 1 : 0;
    } catch (const rdl::error &e) {
        std::fprintf(stderr, "consumer_cpp: %s\n", e.what());
        return 1;
    }
}
