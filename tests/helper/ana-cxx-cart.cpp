// ana-cxx-cart.cpp -- a C++ program whose leak is made in a member function
// of a namespace's class (t4008): shop::Cart::add(int) allocates an Item
// with operator new for each call and loses 3 of them (LEAK-ADD); the
// names are mangled in the symbol table (_ZN4shop4Cart3addEi).
#include <cstdio>

namespace shop {
struct Item {
	int sku;
	Item *next;
};

class Cart {
public:
	__attribute__((noinline)) void add (int sku);
	Item *head = nullptr;
};

void
Cart::add (int sku)
{
	Item *it = new Item { sku, nullptr };  // LEAK-ADD
	it->next = head;
	head = it;
}
} // namespace shop

int
main ()
{
	shop::Cart cart;
	for (int i = 0; i < 3; i++)
		cart.add (i);
	std::printf ("%d\n", cart.head->sku);
	cart.head = nullptr;   // the items are lost
	return 0;
}
