// A stand-in libtorch_cpu.so (-DLIB) and a loop that calls it, for one
// std::string ABI (-D_GLIBCXX_USE_CXX11_ABI=0 or 1): record_function's entry
// under its real mangled name, which takes the name as torch's does, and its
// exit, a local symbol. The loop's name is followed by zeros, so a length
// read where the other ABI keeps it reads 0 and matches nothing.
#include <optional>
#include <string>
#include <unistd.h>
#include <cstdlib>

struct handle {	// returned by value through a hidden pointer, as torch's intrusive_ptr
	void *p;
	~handle();
};
namespace torch::autograd::profiler {
handle record_function_enter_new(const std::string &name, const std::optional<std::string> &args);
}
extern "C" void stand_in_exit(void);

#ifdef LIB
handle::~handle() {}
static volatile size_t seen;
namespace torch::autograd::profiler {
handle record_function_enter_new(const std::string &name, const std::optional<std::string> &args)
{
	seen += name.size() + (args ? 1 : 0);
	return handle{ nullptr };
}
}
__attribute__((used, noinline)) static void leave(void) __asm__(
	"_ZN5torch8autograd8profilerL24record_function_exit_newERKN3c1013intrusive_ptrINS1_20"
	"PythonRecordFunctionENS2_6detail34intrusive_target_default_null_typeIS4_EEEE");
static void leave(void) { seen++; }
extern "C" void stand_in_exit(void) { leave(); }
#else
int main(int argc, char **argv)
{
	struct { std::string s; unsigned long zero[4]; } step = { "Optimizer.step#SGD.step", {} };
	std::optional<std::string> none;
	int n = argc > 1 ? atoi(argv[1]) : 8;

	usleep(1500000);	// the exit is looked up after the load's hold
	for (int i = 0; i < n; i++) {
		torch::autograd::profiler::record_function_enter_new(step.s, none);
		usleep(20000);
		stand_in_exit();
		usleep(20000);
	}
	return 0;
}
#endif
