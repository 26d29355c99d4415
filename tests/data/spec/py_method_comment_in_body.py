class Stack:
    def __init__(self):
        self.items = []

    def peek(self):
        # Return the top item without removing it;‸
        # raise IndexError when the stack is empty.

    def push(self, item):
        self.items.append(item)
