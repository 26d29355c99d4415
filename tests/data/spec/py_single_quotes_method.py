class Temperature:
    def to_fahrenheit(self, celsius):
        '''Convert celsius to fahrenheit‸
