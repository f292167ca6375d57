/* link_check.c - the program each report/ library's link check builds
 * (report/CMakeLists.txt): it calls nothing; the whole library is linked
 * in with only the libraries it may use, so that an undefined reference
 * names a call that goes back up the layers. */
int main(void)
{
	return 0;
}
